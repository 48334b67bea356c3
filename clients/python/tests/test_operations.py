"""Every operation of /openapi.json through the client, against the live service, and the list of them
checked against the document the service serves."""

from __future__ import annotations

from itertools import islice
from typing import List

import matchsim
from matchsim.models import Fixture, PathRequestEventsItemParam

from conftest import CALLED, openapi_document


def test_reads_the_account_and_the_fixtures(client: matchsim.Client, fresh: List[Fixture]) -> None:
    credits = client.credits.get()
    assert credits.object == "credit_balance"
    assert credits.limits.concurrent_simulations >= 1
    assert all(fixture.freshness.status == "fresh" for fixture in fresh)
    # Pages of 2 give the same fixtures as one page of all of them.
    assert [f.fixture_id for f in client.fixtures.list(status="fresh", limit=2)] == [f.fixture_id for f in fresh]
    squads = client.fixtures.squads(fresh[0].fixture_id)
    assert len(squads.home.players) > 10
    lineup = client.fixtures.expected_lineup(fresh[0].fixture_id)
    assert len(lineup.home.xi) == 11
    implied = client.odds.implied(odds=[2.1, 3.4, 3.6], method="shin")
    assert implied.method == "shin"
    assert [round(p, 4) for p in implied.probabilities] == [0.4587, 0.2787, 0.2626]


def test_runs_quotes_batches_paths_projections(client: matchsim.Client, fresh: List[Fixture]) -> None:
    fixture_id = fresh[0].fixture_id
    quote = client.quotes.create(fixture_id=fixture_id, draws=1000)
    assert quote.price.to_dict() == {"draws": 1000, "credits": "1.000"}

    # A 202 (wait_seconds 0) followed through its result path to the simulation.
    sim = client.simulations.create(fixture_id=fixture_id, draws=1000, wait_seconds=0)
    assert sim.object == "simulation" and sim.fixture_id == fixture_id
    assert sim.credits_charged == 1
    assert abs(sim.result.home_win + sim.result.draw + sim.result.away_win - 1) < 1e-9
    assert sim.result.home_win == sim.simulation.result.home_win
    assert sim.receipt.idempotency_key  # the client made one
    again = client.simulations.retrieve(sim.id)
    assert again.id == sim.id and again.credits_charged == 0
    job = client.simulations.job(sim.receipt.job_id, reservation_id=sim.receipt.reservation_id)
    assert isinstance(job, matchsim.models.SimulationRead) and job.id == sim.id
    assert next(iter(client.simulations.jobs(limit=1))).job_id == sim.receipt.job_id  # the newest

    second = fresh[1].fixture_id
    batch = client.batches.create(fixtures=[{"fixture_id": second, "custom_id": "second"}], draws=1000)
    assert batch.object == "simulation_batch"
    results = list(client.batches.results(batch.batch_id))
    assert [(r.custom_id, r.status) for r in results] == [("second", "delivered")]
    assert results[0].simulation is not None and results[0].simulation.fixture_id == second
    status = client.batches.retrieve(batch.batch_id)
    assert status.status == "completed" and status.counts.delivered == 1
    summary = client.batches.summary(batch.batch_id)
    assert summary.counts.to_dict() == status.counts.to_dict()
    assert client.batches.cancel(batch.batch_id).counts.delivered == 1  # nothing left to cancel
    assert next(iter(client.batches.list(limit=1))).batch_id == batch.batch_id

    # A win-probability path: a batch of in-play runs, one a minute, read as a batch.
    events: List[PathRequestEventsItemParam] = [{"minute": "10", "type": "goal", "team": "away"}]
    path_quote = client.quotes.create_path(fixture_id=second, events=events, through="12", draws=100)
    assert (path_quote.steps, path_quote.price.draws) == (12, 1200)
    path = client.paths.create(fixture_id=second, events=events, through="12", draws=100)
    minutes = [item.custom_id for item in client.batches.results(path.batch_id)]
    assert minutes == [str(minute) for minute in range(1, 13)]

    competition_id = fresh[0].competition.competition_id
    projection_quote = client.quotes.create_projection(competition_id=competition_id, seasons=1000)
    assert projection_quote.object == "projection_quote"
    projection = client.projections.create(competition_id=competition_id, seasons=1000, wait_seconds=0)
    assert projection.object == "season_projection"
    assert projection.credits_charged == float(projection_quote.price.credits)
    assert client.projections.retrieve(projection.id).teams == projection.teams
    job_again = client.projections.job(projection.receipt.job_id, reservation_id=projection.receipt.reservation_id)
    assert isinstance(job_again, matchsim.models.SeasonProjection)


def test_webhook_endpoints_events_and_the_low_threshold(client: matchsim.Client) -> None:
    endpoint = client.webhook_endpoints.create(
        url="http://127.0.0.1:9/hook", events=["simulation.succeeded", "batch.completed"]
    )
    assert endpoint.secret.startswith("whsec_")
    assert next(iter(client.webhook_endpoints.list(limit=1))).id == endpoint.id
    assert client.webhook_endpoints.retrieve(endpoint.id).url == endpoint.url
    assert client.webhook_endpoints.update(endpoint.id, description="typed").description == "typed"
    assert client.webhook_endpoints.rotate_secret(endpoint.id).secret != endpoint.secret
    # The runs above wrote simulation.succeeded events (src/webhooks/outbox.ts).
    event = next(iter(client.events.list(type="simulation.succeeded", limit=1)))
    assert client.events.retrieve(event.id) == event
    assert client.events.resend(event.id, endpoint_id=endpoint.id).id == event.id
    assert client.credits.set_low_threshold(threshold=10).threshold == 10
    assert client.credits.low_threshold().threshold == 10
    assert client.credits.set_low_threshold(threshold=None).threshold is None
    assert client.webhook_endpoints.delete(endpoint.id).deleted is True


def test_every_operation_of_the_document_is_a_method_and_was_called(base_url: str) -> None:
    document = openapi_document(base_url)
    operations = {
        operation["operationId"]: (method.upper(), path)
        for path, methods in document["paths"].items()
        for method, operation in methods.items()
    }
    assert matchsim.OPERATIONS == operations
    missing = set(operations) - CALLED
    assert not missing, f"operations no test reached: {sorted(missing)}"


def test_lists_page_by_starting_after(client: matchsim.Client) -> None:
    # Runs exist (above); pages of two give the jobs of one page of a hundred, newest first, each once.
    first = [job.job_id for job in islice(client.simulations.jobs(limit=100), 5)]
    assert len(first) >= 2
    assert [job.job_id for job in islice(client.simulations.jobs(limit=2), 5)] == first
