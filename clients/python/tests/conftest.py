"""The live service these tests call: MATCHSIM_BASE_URL and MATCHSIM_API_KEY (a live key of an organisation
with credits), as test/clients/python-client.test.ts sets them for the demo service it starts. Against
`npm start`: MATCHSIM_BASE_URL=http://localhost:8080 MATCHSIM_API_KEY=<live key> python3 -m pytest."""

from __future__ import annotations

import json
import os
import urllib.request
from typing import Any, Dict, Iterator, List, Set

import pytest

import matchsim
from matchsim._transport import Transport

CALLED: Set[str] = set()


@pytest.fixture(scope="session", autouse=True)
def record_operations() -> Iterator[None]:
    """Every operation the session sends, by operationId, for the test that all were reached."""
    original = Transport._called

    def record(self: Transport, operation: str) -> None:
        CALLED.add(operation)
        original(self, operation)

    setattr(Transport, "_called", record)
    yield
    setattr(Transport, "_called", original)


@pytest.fixture(scope="session")
def base_url() -> str:
    url = os.environ.get("MATCHSIM_BASE_URL")
    if not url or not os.environ.get("MATCHSIM_API_KEY"):
        pytest.fail("set MATCHSIM_BASE_URL and MATCHSIM_API_KEY to a running service and a live key")
    return url


@pytest.fixture(scope="session")
def client(base_url: str) -> matchsim.Client:
    return matchsim.Client(poll_interval=0.25)


@pytest.fixture(scope="session")
def fresh(client: matchsim.Client) -> List[matchsim.models.Fixture]:
    """The fixtures on sale now (the demo's, whatever day it is)."""
    fixtures = list(client.fixtures.list(status="fresh"))
    assert len(fixtures) >= 2
    return fixtures


def openapi_document(base_url: str) -> Dict[str, Any]:
    with urllib.request.urlopen(f"{base_url}/openapi.json") as response:
        document: Dict[str, Any] = json.load(response)
    return document
