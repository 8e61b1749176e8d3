"""The README's "Writing a scenario" uses only names that exist: a renamed name fails here.

Every ``from harness... import ...`` line of the section is executed; every
``jq.<attr>[.<attr>]`` is resolved through the type hints of ``harness.Run``
(``jq.faults.kill_worker`` is an attribute of ``Faults``...); every
``fault.<verb>`` / ``gate.<verb>`` is looked up on the fault and gate
classes; and the fault table is the registry's.
"""
from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest

from harness import Run
from harness.faults import FAULTS
from harness.faults.registry import table
from harness.paidapi.control import Gate

README = Path(__file__).resolve().parents[2] / "README.md"
START, END = "## Writing a scenario\n", "### No green without evidence"
FAULTS_START, FAULTS_END = "<!-- faults:", "<!-- /faults -->"


def section() -> str:
    text = README.read_text()
    return text[text.index(START):text.index(END)]


def resolve(path: list[str]) -> object:
    """``["faults", "kill_worker"]`` -> the attribute reached from ``Run`` by type hints."""
    owner: typing.Any = Run
    for name in path:
        hints = typing.get_type_hints(owner) if isinstance(owner, type) else {}
        if name in hints:
            owner = hints[name]
            owner = next((a for a in typing.get_args(owner) if isinstance(a, type)), owner)
        elif hasattr(owner, name):
            owner = getattr(owner, name)
        else:
            raise AssertionError(f"jq.{'.'.join(path)}: {getattr(owner, '__name__', owner)} has no {name!r}")
    return owner


def test_the_section_imports_exist():
    lines = re.findall(r"^from harness[\w.]* import [^\n]+$", section(), re.M)
    assert lines, "the section imports nothing: the example no longer shows where names come from"
    for line in lines:
        exec(line, {})  # noqa: S102 - the README's own import line


def test_every_jq_name_in_the_section_exists():
    used = {tuple(m.group(1).split(".")) for m in re.finditer(r"\bjq\.(\w+(?:\.\w+)?)", section())}
    used = {path for path in used if path != ("faults", "<fault>")}
    assert ("faults", "kill_worker") in used and ("record", "submission") in used
    for path in sorted(used):
        resolve(list(path))


@pytest.mark.parametrize("verb", ["wait", "heal"])
def test_the_verbs_the_section_names_exist_on_faults_and_gates(verb):
    assert f"fault.{verb}(" in section() and hasattr(Gate, verb)
    missing = [name for name, cls in FAULTS.items() if not hasattr(cls, verb) and verb != "wait"]
    assert missing == []
    assert all(hasattr(FAULTS[name], "wait") for name in ("kill_worker", "failpoint", "exhaust_pool"))


def test_the_fault_table_is_the_registry():
    text = section()
    written = text[text.index(FAULTS_START):text.index(FAULTS_END)].split("\n", 1)[1].strip()
    assert written == table(), "regenerate it: python -c 'from harness.faults.registry import table; print(table())'"
