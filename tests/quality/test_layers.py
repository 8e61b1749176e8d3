"""Imports run one way through the layers: checks -> history -> evidence -> config.

Two views of the same rule: the source (every ``import`` of every module of
a layer, also those inside functions, read with ``ast``), and a fresh
interpreter that imports the layer alone and lists what came with it.
"""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import harness

PACKAGE = Path(harness.__file__).parent
# what sits above everything below: none of the layers checked here may import these
UPPER = {"faults", "run", "session", "stack", "pending", "report", "nightly", "pytest_plugin", "cli",
         "isolation", "leaks", "markers", "mutation", "scaffold"}
FORBIDDEN = {
    "config": UPPER | {"evidence", "history", "checks"},
    "evidence": UPPER | {"history", "checks"},
    "history": UPPER | {"checks"},
    "checks": UPPER,
}


# evidence/collect.py reads a finished run into its history: it sits above the run, not in evidence's layer
ABOVE_ITS_PACKAGE = {PACKAGE / "evidence" / "collect.py"}


def _modules(layer: str) -> list[Path]:
    folder = PACKAGE / layer
    found = sorted(folder.rglob("*.py")) if folder.is_dir() else [PACKAGE / f"{layer}.py"]
    return [path for path in found if path not in ABOVE_ITS_PACKAGE]


def _imported(path: Path) -> set[str]:
    """Every harness module ``path`` imports, at the top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name.startswith("harness.")}


def _layer_of(module: str) -> str:
    return module.split(".")[1]


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_no_module_of_a_layer_imports_a_layer_above_it(layer):
    upward = sorted(f"{path.relative_to(PACKAGE.parent)} imports {module}"
                    for path in _modules(layer) for module in _imported(path)
                    if _layer_of(module) in FORBIDDEN[layer])
    assert upward == [], "imports running up the layers:\n" + "\n".join(upward)


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_layer_imports_alone_in_a_fresh_interpreter(layer):
    script = (f"import json, sys; import harness.{layer}; "
              "print(json.dumps(sorted({m.split('.')[1] for m in sys.modules if m.startswith('harness.')})))")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    loaded = set(json.loads(proc.stdout))
    assert loaded & FORBIDDEN[layer] == set(), f"importing harness.{layer} loaded {sorted(loaded & FORBIDDEN[layer])}"


def test_the_rule_sees_an_upward_import(tmp_path):
    """The source check finds an import inside a function, where a lazy upward import would hide."""
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from harness.checks.result import Result\n    return Result\n")
    assert "harness.checks.result" in _imported(module)
