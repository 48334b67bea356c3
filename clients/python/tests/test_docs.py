"""The examples users read, run as they stand: README.md's, and docs/python.md's worked example."""

from __future__ import annotations

import importlib.util
import pathlib
import re
from typing import Any, Dict

import pytest

HERE = pathlib.Path(__file__).resolve().parent
README = HERE.parent / "README.md"
WORKED = HERE.parent.parent.parent / "docs" / "python.md"


def python_blocks(path: pathlib.Path) -> str:
    """The file's ```python blocks, in order, as one program."""
    return "\n".join(re.findall(r"```python\n(.*?)```", path.read_text(), re.S))


def run(path: pathlib.Path) -> Dict[str, Any]:
    program = python_blocks(path)
    assert program.strip(), f"{path} has no python block"
    namespace: Dict[str, Any] = {"__name__": "__example__"}
    exec(compile(program, str(path), "exec"), namespace)
    return namespace


def test_the_readme_example_runs(base_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    namespace = run(README)
    printed = capsys.readouterr().out
    assert "credits" in printed and "404 fixture_not_found" in printed
    assert namespace["sim"].object == "simulation"


@pytest.mark.skipif(importlib.util.find_spec("pandas") is None, reason="docs/python.md needs pandas")
def test_the_worked_example_runs(base_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    namespace = run(WORKED)
    assert len(namespace["frame"]) == len(namespace["matchday"])
    assert set(namespace["frame"]["status"]) == {"delivered"}
    assert namespace["fitted"].calibration is not None
    assert set(namespace["fitted"].value) == {"home_win", "over_2_5", "btts_yes"}
    assert list(namespace["minutes"]["custom_id"]) == [str(minute) for minute in range(1, 46)]
    capsys.readouterr()
