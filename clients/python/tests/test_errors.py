"""Error answers raised as APIError subclasses with the error object's fields; retryable answers sent again
after Retry-After with the same Idempotency-Key."""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from typing import List

import pytest

import matchsim
from matchsim.models import Fixture


def test_a_missing_fixture_is_a_not_found_error(client: matchsim.Client) -> None:
    with pytest.raises(matchsim.NotFoundError) as caught:
        client.fixtures.squads(2_000_000_000)
    error = caught.value
    assert (error.status, error.code) == (404, "fixture_not_found")
    assert error.doc_url and error.doc_url.endswith("#fixture_not_found")
    assert error.request_id and error.request_id.startswith("req_")
    assert error.retry_after is None
    assert isinstance(error, matchsim.APIError)


def test_a_bad_parameter_names_it(client: matchsim.Client) -> None:
    with pytest.raises(matchsim.BadRequestError) as caught:
        list(client.fixtures.list(limit=0))
    assert (caught.value.code, caught.value.param) == ("parameter_invalid", "limit")


def test_an_unknown_key_is_an_authentication_error(base_url: str) -> None:
    with pytest.raises(matchsim.AuthenticationError) as caught:
        matchsim.Client(api_key="ms_live_unknown", base_url=base_url).credits.get()
    assert caught.value.status == 401


def test_no_key_at_all_is_refused_before_any_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MATCHSIM_API_KEY")
    with pytest.raises(matchsim.MatchsimError, match="MATCHSIM_API_KEY"):
        matchsim.Client()


def test_nothing_listening_is_a_connection_error() -> None:
    closed = matchsim.Client(api_key="ms_live_x", base_url="http://127.0.0.1:9", max_retries=0)
    with pytest.raises(matchsim.APIConnectionError):
        closed.credits.get()


class Retries(logging.Handler):
    """The client's retry lines (logger `matchsim`)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: List[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_a_concurrency_limit_is_waited_out_with_the_same_key(base_url: str, fresh: List[Fixture]) -> None:
    """An organisation allowed one open job (MATCHSIM_LIMITED_KEY, made by the test that starts the
    service): a batch holds its slot, so a run answers 429 concurrency_limited with Retry-After; the
    client sends it again with its Idempotency-Key once the batch is delivered, and it runs once."""
    key = os.environ.get("MATCHSIM_LIMITED_KEY")
    if not key:
        pytest.skip("MATCHSIM_LIMITED_KEY (a live key of an organisation allowed one open job) is not set")
    # Draws no run asked for before (a result already stored is delivered without a job, so without a
    # slot), the batch's enough that it is still running when the run is sent.
    draws = random.randrange(2_000, 9_000)
    once = matchsim.Client(api_key=key, base_url=base_url, max_retries=0, poll_interval=0.25)
    batch = once.batches.create(fixtures=[{"fixture_id": fresh[0].fixture_id}], draws=100_000 + draws)
    with pytest.raises(matchsim.RateLimitError) as caught:
        once.simulations.create(fixture_id=fresh[1].fixture_id, draws=draws)
    assert caught.value.code == "concurrency_limited"
    assert caught.value.retry_after is not None and caught.value.retry_after > 0

    retrying = matchsim.Client(api_key=key, base_url=base_url, max_retries=3)
    retries = Retries()
    logging.getLogger("matchsim").addHandler(retries)
    logging.getLogger("matchsim").setLevel(logging.INFO)
    outcome: List[matchsim.models.Simulation] = []
    runner = threading.Thread(
        target=lambda: outcome.append(
            retrying.simulations.create(fixture_id=fresh[1].fixture_id, draws=draws, idempotency_key=f"py-{draws}")
        )
    )
    try:
        runner.start()
        for _ in range(200):  # the first answer is the 429 (the batch holds the slot)
            if retries.lines:
                break
            time.sleep(0.05)
        assert retries.lines and "429 concurrency_limited" in retries.lines[0]
        assert [item.status for item in once.batches.results(batch.batch_id)] == ["delivered"]
        runner.join()
    finally:
        logging.getLogger("matchsim").removeHandler(retries)
    assert outcome and outcome[0].receipt.idempotency_key == f"py-{draws}"
    jobs = [job for job in once.simulations.jobs(limit=10) if job.price.draws == draws]
    assert len(jobs) == 1  # sent twice, run once
