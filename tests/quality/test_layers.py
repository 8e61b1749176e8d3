"""Imports run one way, down the layers of ``LAYERS``, and no import goes round in a circle.

A unit is a package or a top-level module of ``harness``. A unit may import
units of lower layers only, never one of its own layer or above. Two views of the same rule: the source (every ``import`` of
every module, also those inside functions and under ``TYPE_CHECKING``, read
with ``ast``), and a fresh interpreter that imports one unit alone and lists
what came with it. Module by module, neither ``harness`` nor ``refapp`` may
hold an import cycle. ``LAYERS`` is in ``tests/common/architecture.py``, which also
draws it in ``docs/explanation/architecture.md`` (``test_architecture_doc.py``).
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.common.architecture import LAYER_OF, LAYERS
from tests.common.imports import ROOT, cycle_in, imported, layer_violations, module_graph, unit_graph, unit_of, units


def test_every_unit_has_a_layer_once():
    listed = [unit for layer in LAYERS for unit in layer]
    assert len(listed) == len(set(listed)), "a unit is listed in two layers"
    assert set(listed) == units(), (f"units without a layer: {sorted(units() - set(listed))}; "
                                    f"layers naming no unit: {sorted(set(listed) - units())}")


def test_no_import_runs_up_the_layers_or_across_one():
    wrong = layer_violations(unit_graph(), LAYER_OF)
    assert wrong == [], "imports not running down the layers:\n" + "\n".join(wrong)


@pytest.mark.parametrize("package", ["harness", "refapp"])
def test_no_module_imports_itself_round_a_circle(package):
    assert cycle_in(module_graph(package)) is None, f"import cycle in {package}: {cycle_in(module_graph(package))}"


@pytest.mark.parametrize("unit", sorted(u for u in LAYER_OF if u != "pytest_plugin"))
def test_a_unit_imports_alone_in_a_fresh_interpreter(unit):
    """At run time too (an import by name would not show in the source): nothing of a layer above."""
    script = (f"import json, sys; import harness.{unit}; "
              "print(json.dumps(sorted(m for m in sys.modules if m.startswith('harness.'))))")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    loaded = {name for name in json.loads(proc.stdout)}
    above = sorted(name for name in loaded
                   if unit_of(name) != unit and LAYER_OF.get(unit_of(name), -1) > LAYER_OF[unit])
    assert above == [], f"importing harness.{unit} loaded {above}"


def test_the_rule_sees_an_upward_import_inside_a_function_or_for_types(tmp_path):
    """The source check reads imports inside functions and under TYPE_CHECKING, where a lazy one would hide."""
    graph = {"checks": {"run"}, "run": set()}
    assert layer_violations(graph, LAYER_OF) == [f"checks imports run (layer {LAYER_OF['run']}, above its own "
                                                 f"{LAYER_OF['checks']})"]
    module = tmp_path / "m.py"
    module.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from harness.run import Run\n"
                      "def f():\n    from harness.checks.result import Result\n    return Result\n")
    assert {"harness.run", "harness.checks.result"} <= imported(module, "harness.m", {"harness.run",
                                                                                   "harness.checks.result"})


def test_the_rule_sees_a_cycle():
    assert cycle_in({"a": {"b"}, "b": {"c"}, "c": {"a"}}) is not None
    assert cycle_in({"a": {"b"}, "b": set()}) is None
