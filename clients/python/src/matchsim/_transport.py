"""HTTP for the client, on Python's standard library alone (urllib): bearer auth, JSON in and out, errors
raised as `APIError`s, retries that follow the answer's advice (docs/api.md §7), a 202 followed to its
result, lists read page after page, and a batch's NDJSON results read line by line from the socket."""

from __future__ import annotations

import datetime
import http.client
import json
import logging
import random
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import (
    Any,
    Callable,
    Dict,
    Generic,
    Iterator,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Set,
    Tuple,
    TypeVar,
    Union,
)

from ._errors import APIConnectionError, APIError, MatchsimError, error_for
from ._frames import pandas
from ._model import NOT_GIVEN, NotGiven, given

T = TypeVar("T")

#: Retries are logged here at INFO (what was answered, how long the client waits).
logger = logging.getLogger("matchsim")

VERSION = "2.0.0"

#: The most bytes of a stream read from the socket at once.
STREAM_CHUNK_BYTES = 64 * 1024

#: Item states after which a line of a batch's results stream no longer changes.
FINAL_ITEM_STATES = frozenset({"delivered", "failed", "expired", "cancelled", "rejected"})


class Answer(NamedTuple):
    """A successful answer: its status (200, 202, …), its JSON body, its headers."""

    status: int
    body: Dict[str, Any]
    headers: Mapping[str, str]


class _Reply(NamedTuple):
    """One exchange's outcome before it is judged: a status, headers and the body (or the open response)."""

    status: int
    headers: Mapping[str, str]
    body: bytes
    response: Optional[http.client.HTTPResponse]


class Transport:
    """Sends the operations of `operations` (operationId: method and path template) to `base_url`."""

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str,
        operations: Mapping[str, Tuple[str, str]],
        timeout: float,
        max_retries: int,
        max_retry_wait: float,
        poll_interval: float,
    ) -> None:
        self.api_key = api_key
        self.base_url = base_url.rstrip("/")
        self.operations = operations
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        self.poll_interval = poll_interval

    # ---- one operation ---------------------------------------------------------------------------------

    def request(
        self,
        operation: str,
        *,
        path: Optional[Mapping[str, Any]] = None,
        query: Optional[Mapping[str, Any]] = None,
        body: Optional[Mapping[str, Any]] = None,
        idempotency_key: Union[str, None, NotGiven] = NOT_GIVEN,
    ) -> Answer:
        """Sends an operation and returns its answer; an error answer is raised as an APIError.

        `idempotency_key`: left out (NOT_GIVEN) for operations that take none; None makes one, sent with
        every retry of this call, so that a retry never runs or charges twice."""
        method, template = self.operations[operation]
        self._called(operation)
        target = self._target(template, path or {}, query or {})
        key = None if isinstance(idempotency_key, NotGiven) else (idempotency_key or str(uuid.uuid4()))
        reply = self._send(method, target, None if body is None else given(body), key, stream=False)
        return Answer(reply.status, _json_object(reply.body), reply.headers)

    def follow(self, answer: Answer, operation: str) -> Dict[str, Any]:
        """The 200 body a 202 leads to: its `result_url` read again, `retry_after_seconds` apart."""
        while answer.status == 202:
            time.sleep(max(0.25, float(answer.body.get("retry_after_seconds") or 0)))
            reply = self._send("GET", answer.body["result_url"], None, None, stream=False)
            self._called(operation)
            answer = Answer(reply.status, _json_object(reply.body), reply.headers)
        return answer.body

    # ---- lists -----------------------------------------------------------------------------------------

    def pages(self, cursor: str, operation: str, *, query: Mapping[str, Any]) -> Iterator[Dict[str, Any]]:
        """Every item of a list, a page at a time: `starting_after` is the last item's `cursor` field."""
        params = given(query)
        while True:
            page = self.request(operation, query=params).body
            data: List[Dict[str, Any]] = page["data"]
            yield from data
            if not page.get("has_more") or not data:
                return
            params["starting_after"] = data[-1][cursor]

    def fixture_pages(self, operation: str, *, query: Mapping[str, Any]) -> Iterator[Dict[str, Any]]:
        """Every fixture of the window, ordered by kick-off then id, though `limit` cuts each page: the
        next page starts on the day of the last fixture read (the list's window is by UTC day, docs/api.md
        §4.2), its end pinned to the first page's, and what was read already is passed over."""
        params = given(query)
        today = datetime.datetime.now(datetime.timezone.utc).date()
        last: Optional[Tuple[str, int]] = None
        while True:
            page = self.request(operation, query=params).body
            new = 0
            for fixture in page["data"]:
                position = (fixture["kickoff"], fixture["fixture_id"])
                if last is not None and position <= last:
                    continue
                last = position
                new += 1
                yield fixture
            if not page.get("has_more") or last is None:
                return
            if new == 0:
                if int(params.get("limit", 50)) >= 200:
                    raise MatchsimError("more than 200 fixtures kick off on one day: narrow the filters")
                params["limit"] = 200
                continue
            if "to" not in params:
                start = datetime.date.fromisoformat(params["from"]) if "from" in params else today
                params["to"] = (start + datetime.timedelta(days=14)).isoformat()
            params["from"] = last[0][:10]

    # ---- streams ---------------------------------------------------------------------------------------

    def stream_lines(
        self, operation: str, *, path: Mapping[str, Any], query: Mapping[str, Any]
    ) -> Iterator[bytes]:
        """The lines of an NDJSON answer as they come off the socket: what has arrived is read (`read1`, a
        chunk at a time; `readline` reads a chunked body a byte at a time) and split at its newlines, so
        no more than a line and a chunk is ever held, never the body. A connection lost on the way raises
        APIConnectionError."""
        method, template = self.operations[operation]
        self._called(operation)
        target = self._target(template, path, query)
        reply = self._send(method, target, None, None, stream=True)
        response = reply.response
        assert response is not None
        with response:
            pending = b""
            try:
                while True:
                    chunk = response.read1(STREAM_CHUNK_BYTES)
                    if not chunk:
                        break
                    *lines, pending = (pending + chunk).split(b"\n")
                    for line in lines:
                        if line.strip():
                            yield line
            except (OSError, http.client.HTTPException) as error:
                raise APIConnectionError(f"{method} {target}: the stream broke off: {error!r}") from error
            if pending.strip():
                yield pending

    # ---- the exchange and its retries ------------------------------------------------------------------

    def _called(self, operation: str) -> None:
        """Each operation sent, by its id (a seam for tests that list the operations a run reached)."""

    def _target(self, template: str, path: Mapping[str, Any], query: Mapping[str, Any]) -> str:
        target = template
        for name, value in path.items():
            target = target.replace("{" + name + "}", urllib.parse.quote(str(value), safe=""))
        params = given(query)
        return f"{target}?{urllib.parse.urlencode(params)}" if params else target

    def _send(
        self,
        method: str,
        target: str,
        body: Optional[Dict[str, Any]],
        idempotency_key: Optional[str],
        *,
        stream: bool,
    ) -> _Reply:
        headers = {
            "Authorization": f"Bearer {self.api_key}",
            "Accept": "application/x-ndjson" if stream else "application/json",
            "User-Agent": f"matchsim-python/{VERSION}",
        }
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        # Sending again is safe when nothing happened (429), the request reads, or it carries its key.
        safe = method == "GET" or idempotency_key is not None
        for attempt in range(1, self.max_retries + 2):
            request = urllib.request.Request(self.base_url + target, data=data, headers=headers, method=method)
            try:
                reply = self._exchange(request, stream)
            except APIConnectionError as lost:
                if not safe or attempt > self.max_retries:
                    raise
                wait = self._backoff(attempt)
                logger.info("retrying %s %s in %.2f s: %s", method, target, wait, lost)
                time.sleep(wait)
                continue
            if reply.status < 400:
                return reply
            error = _error_object(reply)
            retry_after = _retry_after(reply.headers, error)
            delay = self._retry_delay(reply.status, error, retry_after, attempt, safe or reply.status == 429)
            if delay is None:
                raise error_for(reply.status, error, retry_after)
            logger.info("retrying %s %s in %.2f s: %s %s", method, target, delay, reply.status, error.get("code"))
            time.sleep(delay)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _exchange(self, request: urllib.request.Request, stream: bool) -> _Reply:
        try:
            response: http.client.HTTPResponse = urllib.request.urlopen(request, timeout=self.timeout)
        except urllib.error.HTTPError as error:
            with error:
                return _Reply(error.code, dict(error.headers.items()), error.read(), None)
        except (urllib.error.URLError, OSError, http.client.HTTPException) as error:
            raise APIConnectionError(f"{request.get_method()} {request.full_url}: {error}") from error
        headers = dict(response.headers.items())
        if stream:
            return _Reply(response.status, headers, b"", response)
        with response:
            try:
                return _Reply(response.status, headers, response.read(), None)
            except (OSError, http.client.HTTPException) as error:
                raise APIConnectionError(f"{request.get_method()} {request.full_url}: {error}") from error

    def _retry_delay(
        self, status: int, error: Mapping[str, Any], retry_after: Optional[float], attempt: int, safe: bool
    ) -> Optional[float]:
        """Seconds to wait before sending again, or None when the answer is final (docs/api.md §7: only
        `backoff_with_jitter` advice is retried by a machine; `wait_for_change` needs the caller)."""
        if attempt > self.max_retries or not safe or (status != 429 and status < 500):
            return None
        advice = error.get("retry") or {}
        if not advice.get("retryable") or advice.get("strategy") != "backoff_with_jitter":
            return None
        if retry_after:
            return min(self.max_retry_wait, retry_after)
        return self._backoff(attempt)

    def _backoff(self, attempt: int) -> float:
        return min(self.max_retry_wait, 0.5 * 2.0 ** (attempt - 1) * (0.5 + random.random() / 2))


def _json_object(body: bytes) -> Dict[str, Any]:
    value = json.loads(body) if body else {}
    if not isinstance(value, dict):
        raise MatchsimError(f"the answer is no JSON object: {body[:200]!r}")
    return value


def _error_object(reply: _Reply) -> Dict[str, Any]:
    """The answer's error object, or one made of its status and text when it has none (a proxy's page)."""
    try:
        error = json.loads(reply.body).get("error")
        if isinstance(error, dict):
            return error
    except (ValueError, AttributeError):
        pass
    text = reply.body[:500].decode("utf-8", "replace")
    return {"code": None, "message": text or f"HTTP {reply.status}"}


def _retry_after(headers: Mapping[str, str], error: Mapping[str, Any]) -> Optional[float]:
    """The longer of Retry-After (seconds) and the error's `retry.after_seconds`; None when neither says."""
    named: List[float] = []
    header = next((value for key, value in headers.items() if key.lower() == "retry-after"), None)
    if header is not None:
        try:
            named.append(float(header))
        except ValueError:
            pass  # an HTTP date: the error's after_seconds says the same in seconds
    after = (error.get("retry") or {}).get("after_seconds")
    if isinstance(after, (int, float)):
        named.append(float(after))
    return max(named) if named else None


class BatchResults(Generic[T]):
    """A batch's results, each item once it has ended, read line by line from the NDJSON results stream
    (docs/api.md §4.10): delivered items with their simulation (the stream settles each, charging draws /
    1000 credits once), the others with their error. While items are still queued or running the stream
    is read again, `poll_interval` apart; only the positions already given are kept, never the items.
    Iterate it, or `to_frame()` for a DataFrame (needs pandas)."""

    def __init__(
        self,
        transport: Transport,
        convert: Callable[[Any], T],
        operation: str,
        *,
        path: Mapping[str, Any],
        query: Mapping[str, Any],
    ) -> None:
        self._transport = transport
        self._convert = convert
        self._operation = operation
        self._path = path
        self._query = query

    def __iter__(self) -> Iterator[T]:
        for _, item in self._raw():
            yield self._convert(item)

    def _raw(self) -> Iterator[Tuple[int, Dict[str, Any]]]:
        """Each item once it has ended, with its position in the batch (items end in any order). A stream
        that breaks off is read again (`max_retries` times in a row at most): the items given stay given,
        and a delivered item is delivered again free (docs/api.md §4.10)."""
        given_positions: Set[int] = set()
        broken = 0
        while True:
            count = 0
            lines = self._transport.stream_lines(self._operation, path=self._path, query=self._query)
            try:
                for line in lines:
                    position = count
                    count += 1
                    if position in given_positions:
                        continue
                    item = json.loads(line)
                    if item.get("status") not in FINAL_ITEM_STATES:
                        continue
                    given_positions.add(position)
                    yield position, item
            except APIConnectionError as lost:
                broken += 1
                if broken > self._transport.max_retries:
                    raise
                logger.info("reading the results again: %s", lost)
                continue
            broken = 0
            if len(given_positions) == count:
                return
            time.sleep(self._transport.poll_interval)

    def to_frame(self) -> Any:
        """A DataFrame, a row per item in the batch's order, once every item has ended: custom_id, fixture,
        status, the simulation's id, its 1X2 probabilities and expected goals, the credits charged, and the
        error code of an item that has none (needs pandas; the sections left out by `include` are empty)."""
        module = pandas()
        rows = sorted(((position, _result_row(item)) for position, item in self._raw()), key=lambda pair: pair[0])
        return module.DataFrame([row for _, row in rows], columns=list(_RESULT_COLUMNS))


_RESULT_COLUMNS = (
    "custom_id",
    "fixture",
    "status",
    "simulation_id",
    "home_win",
    "draw",
    "away_win",
    "expected_home",
    "expected_away",
    "credits_charged",
    "error_code",
)


def _result_row(item: Mapping[str, Any]) -> Dict[str, Any]:
    simulation = item.get("simulation") or {}
    document = simulation.get("simulation") or {}
    result = document.get("result") or {}
    expected = (document.get("goals") or {}).get("expected") or {}
    return {
        "custom_id": item.get("custom_id"),
        "fixture": item.get("fixture"),
        "status": item.get("status"),
        "simulation_id": simulation.get("id"),
        "home_win": result.get("home_win"),
        "draw": result.get("draw"),
        "away_win": result.get("away_win"),
        "expected_home": expected.get("home"),
        "expected_away": expected.get("away"),
        "credits_charged": simulation.get("credits_charged"),
        "error_code": (item.get("error") or {}).get("code"),
    }
