"""pandas DataFrames of what the API answers, where pandas is installed (it is optional: the client
itself needs only the standard library). Without pandas, `to_frame()` raises an ImportError that names it.
"""

from __future__ import annotations

import importlib
from typing import Any, Dict, Iterable, List, Mapping


def pandas() -> Any:
    """The pandas module, or an ImportError that says what `to_frame()` needs."""
    try:
        return importlib.import_module("pandas")
    except ImportError as error:
        raise ImportError(
            "to_frame() needs pandas, which is not installed: `pip install pandas` "
            "(the matchsim client itself needs only Python's standard library)"
        ) from error


def records_frame(records: Iterable[Any]) -> Any:
    """A DataFrame, a row per JSON object, nested objects flattened into dotted columns."""
    module = pandas()
    return module.json_normalize(list(records), sep=".")


class MarketsFrame:
    """`to_frame()` on a document's markets: one row per priced selection (market, selection, line,
    probability), the shape a trader lines up against a book's prices."""

    _data: Dict[str, Any]

    def to_frame(self) -> Any:
        """A DataFrame with a row per selection of every market: market, selection, line, probability."""
        rows: List[Dict[str, Any]] = []
        for market, value in self._data.items():
            if isinstance(value, list):
                for entry in value:
                    rows.extend(_selection_rows(market, entry))
            elif isinstance(value, dict):
                for selection, probability in value.items():
                    rows.append({"market": market, "selection": selection, "line": None, "probability": probability})
        return pandas().DataFrame(rows, columns=["market", "selection", "line", "probability"])


def _selection_rows(market: str, entry: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """The rows of one entry of a list market: a scoreline, a total's line, a handicap's line."""
    if "probability" in entry:  # a scoreline: home-away is the selection
        selection = f"{entry.get('home')}-{entry.get('away')}"
        return [{"market": market, "selection": selection, "line": None, "probability": entry["probability"]}]
    named = {key: value for key, value in entry.items() if key not in ("line", "team")}
    prefix = f"{entry['team']} " if "team" in entry else ""
    return [
        {"market": market, "selection": f"{prefix}{key}", "line": entry.get("line"), "probability": value}
        for key, value in named.items()
    ]
