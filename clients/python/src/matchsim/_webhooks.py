"""Verifying a webhook delivery (docs/api.md §6): the Matchsim-Signature header is
`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, with two v1= while a rotated secret is still
valid. Verify the raw body as received, before parsing it; an old timestamp is refused so that a captured
delivery cannot be replayed later."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Mapping, Optional, Union

from ._errors import WebhookSignatureError
from .models import Event

SIGNATURE_HEADER = "Matchsim-Signature"


def verify_webhook(
    payload: Union[bytes, str],
    headers: Mapping[str, str],
    secret: str,
    *,
    tolerance_seconds: int = 300,
    now: Optional[float] = None,
) -> Event:
    """The event of a delivery whose signature is valid: one v1= of its Matchsim-Signature header (found
    in `headers` in any case) is the HMAC of `<t>.<payload>` with `secret`, and t is within
    `tolerance_seconds` of now. Raises WebhookSignatureError otherwise. Events may arrive more than once
    (at least once): deduplicate on `event.id`."""
    header = next((value for key, value in headers.items() if key.lower() == SIGNATURE_HEADER.lower()), None)
    if not header:
        raise WebhookSignatureError("No Matchsim-Signature header.")
    body = payload.encode() if isinstance(payload, str) else payload
    pairs = [part.split("=", 1) for part in header.split(",") if "=" in part]
    timestamps = [value.strip() for key, value in pairs if key.strip() == "t"]
    if not timestamps or not timestamps[0].isdigit():
        raise WebhookSignatureError("The header has no timestamp.")
    timestamp = int(timestamps[0])
    if abs((time.time() if now is None else now) - timestamp) > tolerance_seconds:
        raise WebhookSignatureError("The timestamp is outside the tolerance.")
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    if not any(key.strip() == "v1" and hmac.compare_digest(value.strip(), expected) for key, value in pairs):
        raise WebhookSignatureError("No signature matches this secret.")
    return Event(json.loads(body))
