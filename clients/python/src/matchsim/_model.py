"""What every generated object stands on: the JSON as received, read through typed properties.

A model keeps the parsed JSON object it was made from and reads each field when asked, so `to_dict()`
gives back exactly what the service sent, fields this version does not know included (readable with
`model["field"]`), and an unread section costs nothing.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, TypeVar

from ._frames import records_frame

T = TypeVar("T")


class Model:
    """An object of the API: typed attributes over its JSON."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any]) -> None:
        if not isinstance(data, Mapping):
            raise TypeError(f"{type(self).__name__} is made from a JSON object, not {type(data).__name__}")
        self._data: Dict[str, Any] = dict(data)

    def to_dict(self) -> Dict[str, Any]:
        """The JSON object as the service sent it (a copy: changing it leaves this object as it was)."""
        return copy.deepcopy(self._data)

    def to_json(self, **options: Any) -> str:
        """The JSON object as text; `options` go to `json.dumps` (e.g. `indent=2`)."""
        return json.dumps(self._data, **options)

    def __getitem__(self, key: str) -> Any:
        """A field by its JSON name, also one this version of the client has no attribute for."""
        return self._data[key]

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._data == self._data  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        text = json.dumps(self._data)
        return f"{type(self).__name__}({text if len(text) <= 200 else text[:197] + '...'})"


class ModelList(List[T]):
    """A list of objects of the API; `to_frame()` gives a pandas DataFrame, a row per object."""

    def to_frame(self) -> Any:
        """A pandas DataFrame, a row per object, nested fields as dotted columns (needs pandas)."""
        return records_frame(item.to_dict() if isinstance(item, Model) else item for item in self)


class NotGiven:
    """The default of an optional parameter: left out of the request, where None would send null."""

    _instance: Optional[NotGiven] = None

    def __new__(cls) -> NotGiven:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "NOT_GIVEN"


NOT_GIVEN = NotGiven()


def given(values: Mapping[str, Any]) -> Dict[str, Any]:
    """The entries whose value was given (NOT_GIVEN left out)."""
    return {key: value for key, value in values.items() if value is not NOT_GIVEN}


# The readers generated properties use (models.py): a raw JSON value made into its typed form.


def _optional(convert: Callable[[Any], T], raw: Any) -> Optional[T]:
    return None if raw is None else convert(raw)


def _list(convert: Callable[[Any], T], raw: Iterable[Any]) -> ModelList[T]:
    return ModelList(convert(item) for item in raw)


def _map(convert: Callable[[Any], T], raw: Mapping[str, Any]) -> Dict[str, T]:
    return {key: convert(value) for key, value in raw.items()}
