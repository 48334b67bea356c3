"""A batch's results streamed line by line with memory flat; objects keep their JSON; DataFrames where
pandas is installed, and an ImportError naming pandas where it is not."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
import tracemalloc
from typing import List

import pytest

import matchsim
from matchsim.models import BatchRequestFixturesItemParam, Fixture

#: 100 in the fast tier, 1,000 in the slow one (vitest.config.ts SIZED).
ITEMS = int(os.environ.get("MATCHSIM_STREAM_ITEMS", "100"))
has_pandas = importlib.util.find_spec("pandas") is not None


def test_a_batch_streams_with_memory_flat(client: matchsim.Client, fresh: List[Fixture]) -> None:
    # Distinct selectors (a batch refuses repeats): each fixture from a different minute in play, and from
    # another score once the minutes run out.
    n = len(fresh)
    items: List[BatchRequestFixturesItemParam] = [
        {
            "fixture_id": fresh[i % n].fixture_id,
            "custom_id": f"item-{i}",
            "from_state": {"minute": str(1 + (i // n) % 85), "score": {"home": i // (n * 85), "away": 0}},
        }
        for i in range(ITEMS)
    ]
    batch = client.batches.create(fixtures=items, draws=100)
    while client.batches.retrieve(batch.batch_id).status != "completed":
        counts = client.batches.retrieve(batch.batch_id).counts
        if counts.queued + counts.running == 0:
            break
        time.sleep(0.5)
    tracemalloc.start()
    try:
        streamed = 0
        ids = []
        for item in client.batches.results(batch.batch_id):
            streamed += len(item.to_json())
            ids.append(item.custom_id)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert ids == [f"item-{i}" for i in range(ITEMS)]
    # Every document went through, yet at most about one item was held at a time.
    assert peak * 4 < streamed, f"peak {peak} bytes while streaming {streamed}"


def test_objects_give_their_json_back_exactly_and_keep_unknown_fields(fresh: List[Fixture]) -> None:
    sent = fresh[0].to_dict()
    sent["field_of_a_later_version"] = {"nested": [1, 2]}
    fixture = Fixture(sent)
    assert fixture.to_dict() == sent
    assert fixture["field_of_a_later_version"] == {"nested": [1, 2]}
    assert fixture.home.name == sent["home"]["name"]
    changed = fixture.to_dict()
    changed["home"]["name"] = "changed"
    assert fixture.home.name == sent["home"]["name"]


@pytest.mark.skipif(not has_pandas, reason="pandas is not installed")
def test_frames_of_results_markets_and_players(client: matchsim.Client, fresh: List[Fixture]) -> None:
    batch = client.batches.create(
        fixtures=[{"fixture_id": f.fixture_id, "custom_id": str(f.fixture_id)} for f in fresh[:3]], draws=1000
    )
    frame = client.batches.results(batch.batch_id).to_frame()
    assert list(frame["custom_id"]) == [str(f.fixture_id) for f in fresh[:3]]
    assert set(frame["status"]) == {"delivered"}
    assert ((frame["home_win"] + frame["draw"] + frame["away_win"] - 1).abs() < 1e-9).all()

    sim = client.simulations.create(fixture_id=fresh[0].fixture_id, draws=1000)
    markets = sim.markets.to_frame()
    assert list(markets.columns) == ["market", "selection", "line", "probability"]
    btts = markets[markets["market"] == "btts"].set_index("selection")["probability"]
    assert btts["yes"] == sim.markets.btts.yes and btts["no"] == sim.markets.btts.no
    totals = markets[(markets["market"] == "totals") & (markets["line"] == 2.5)]
    assert set(totals["selection"]) == {"over", "under"}
    players = sim.players.to_frame()
    assert len(players) == len(sim.players)
    assert list(players["player_id"]) == [p.player_id for p in sim.players]
    assert "probabilities.anytime_scorer" in players.columns


def test_without_pandas_to_frame_names_it() -> None:
    # A Python where `import pandas` fails, whether or not pandas is installed here.
    script = (
        "import sys; sys.modules['pandas'] = None\n"
        "import matchsim\n"
        "try:\n"
        "    matchsim.ModelList([]).to_frame()\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    source = os.path.join(os.path.dirname(matchsim.__file__), "..")
    env = {**os.environ, "PYTHONPATH": os.path.abspath(source)}
    printed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    assert "to_frame() needs pandas" in printed.stdout
