"""The client: `matchsim.Client(api_key=..., base_url=...)`, every operation of the API under its
resource (`client.simulations.create(...)`, generated in _resources.py from the OpenAPI document)."""

from __future__ import annotations

import os
from typing import Optional

from ._errors import MatchsimError
from ._resources import OPERATIONS, Resources
from ._transport import Transport

DEFAULT_BASE_URL = "http://localhost:8080"


class Client(Resources):
    """A client of the matchsim API.

    `api_key` defaults to the environment's MATCHSIM_API_KEY, `base_url` to MATCHSIM_BASE_URL, else
    http://localhost:8080. `timeout`: seconds a connection may stay silent. `max_retries`: how many times a
    retryable answer (429, 503, … whose advice is `backoff_with_jitter`) or a lost connection is sent again,
    after its Retry-After, at most `max_retry_wait` seconds each; runs and batches carry an Idempotency-Key
    (made here when none is given) so that a retry never runs or charges twice. `poll_interval`: seconds
    between reads of a batch's results while items are still running."""

    def __init__(
        self,
        api_key: Optional[str] = None,
        *,
        base_url: Optional[str] = None,
        timeout: float = 120.0,
        max_retries: int = 3,
        max_retry_wait: float = 30.0,
        poll_interval: float = 1.0,
    ) -> None:
        key = api_key or os.environ.get("MATCHSIM_API_KEY")
        if not key:
            raise MatchsimError("No API key: pass api_key=... or set MATCHSIM_API_KEY.")
        self.base_url = (base_url or os.environ.get("MATCHSIM_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self._transport = Transport(
            api_key=key,
            base_url=self.base_url,
            operations=OPERATIONS,
            timeout=timeout,
            max_retries=max_retries,
            max_retry_wait=max_retry_wait,
            poll_interval=poll_interval,
        )
        super().__init__(self._transport)

    def __repr__(self) -> str:
        return f"matchsim.Client(base_url={self.base_url!r})"
