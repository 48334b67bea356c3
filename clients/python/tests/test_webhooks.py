"""A real webhook delivery, received by a server of the test's own and verified with verify_webhook."""

from __future__ import annotations

import http.server
import queue
import random
import threading
from typing import Dict, List, Tuple

import pytest

import matchsim
from matchsim.models import Fixture

Delivery = Tuple[bytes, Dict[str, str]]


def test_a_delivery_verifies_and_a_changed_one_does_not(client: matchsim.Client, fresh: List[Fixture]) -> None:
    received: "queue.Queue[Delivery]" = queue.Queue()

    class Receiver(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            received.put((body, dict(self.headers.items())))
            self.send_response(200)
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = client.webhook_endpoints.create(
        url=f"http://127.0.0.1:{server.server_address[1]}/hook", events=["simulation.succeeded"]
    )
    try:
        sim = client.simulations.create(fixture_id=fresh[0].fixture_id, draws=random.randrange(9_000, 20_000))
        while True:  # deliveries of events older than the endpoint do not come; this run's does
            body, headers = received.get(timeout=60)
            event = matchsim.verify_webhook(body, headers, endpoint.secret)
            if event.data.object.get("job_id") == sim.receipt.job_id:
                break
        assert event.type == "simulation.succeeded"
        with pytest.raises(matchsim.WebhookSignatureError):
            matchsim.verify_webhook(body.replace(b"succeeded", b"failed"), headers, endpoint.secret)
        with pytest.raises(matchsim.WebhookSignatureError):
            matchsim.verify_webhook(body, headers, "whsec_another")
        with pytest.raises(matchsim.WebhookSignatureError, match="tolerance"):
            matchsim.verify_webhook(body, headers, endpoint.secret, now=0)
    finally:
        client.webhook_endpoints.delete(endpoint.id)
        server.shutdown()
