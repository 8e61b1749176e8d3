"""The API a type checker sees is the API there is.

- ``make typecheck`` (mypy --strict on the public modules and the shipped scenarios, as
  pyproject.toml's [tool.mypy] lists them) passes;
- mypy finds a misspelt fault, a keyword a fault does not take, a misspelt ``Run`` attribute and
  a wrong return type in a scenario, and passes the same scenario written right;
- every public module spells out ``__all__``; the packages that load their names lazily
  (``harness``, ``harness.paidapi``, ``harness.proxy``) list each name the same way for run time,
  for type checkers and in ``__all__``;
- scenarios (shipped, and the second app's) import only public names (``tests/docs`` checks the
  docs' blocks with the same rule, ``tests.common.public_names``).
"""
from __future__ import annotations

import ast
import importlib
import textwrap
import tomllib
from pathlib import Path

import pytest

from tests.common.public_names import private_uses
from tests.common.typecheck import ROOT, mypy

HARNESS = ROOT / "harness"
SCENARIO_FOLDERS = [ROOT / "scenarios", ROOT / "tests" / "ownapp" / "scenarios"]


def _checked_files() -> list[Path]:
    """The files [tool.mypy] names, folders expanded."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    found: list[Path] = []
    for entry in config["files"]:
        path = ROOT / entry
        found += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return found


def public_modules() -> list[Path]:
    """The public modules of harness: those [tool.mypy] checks, less the private ones (``_x.py``)."""
    return [p for p in _checked_files() if HARNESS in p.parents
            and not any(part.startswith("_") and part != "__init__.py" for part in p.relative_to(ROOT).parts)]


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_the_public_api_and_the_scenarios_pass_mypy_strict():
    assert mypy([]) == []  # no file given: the ones [tool.mypy] lists


SCENARIO = '''
from harness import Run, wait_until
from harness.faults import InFlight, KillWorker


def test_a_kill(jq: Run) -> None:
    kill: KillWorker = jq.faults.kill_worker(when=InFlight(), replace=True)
    jq.faults.network_toxic("paidapi", "latency", latency=200)
    kill.wait(timeout=jq.scaled(30))
    wait_until(lambda: jq.paidapi.stats()["calls"] > 0, timeout=5)
    jq.settle()
'''
# each mistake, as a line of the scenario above, and the error mypy must report for it
MISTAKES = {
    "jq.faults.kil_worker(when=InFlight())": '"Faults" has no attribute "kil_worker"; maybe "kill_worker"?',
    "jq.faults.kill_worker(wrker='worker1')": 'Unexpected keyword argument "wrker"',
    "jq.faults.pause_service()": "Too few arguments",  # the service to pause
    "jq.faults.hang_endpoint(mid_stream='yes')": 'incompatible type "str"; expected "bool"',
    "jq.faults.kill_worker(when=30)": 'Argument "when" has incompatible type "int"; expected "When | dict',
    "jq.setle()": '"Run" has no attribute "setle"',
    "paused: KillWorker = jq.faults.pause_service('relay')": 'expression has type "PauseService"',
}


def test_mypy_finds_a_typo_in_a_scenario_and_passes_it_written_right(tmp_path):
    right = tmp_path / "test_right.py"
    right.write_text(SCENARIO, encoding="utf-8")
    wrong = tmp_path / "test_wrong.py"
    lines = [f"    {mistake}" for mistake in MISTAKES]
    wrong.write_text(SCENARIO + "\n".join(lines) + "\n", encoding="utf-8")
    first = len(SCENARIO.splitlines()) + 1
    found = mypy([right, wrong])
    assert [f for f in found if f.path.name == right.name] == []
    by_line = {f.line: f.message for f in found}
    for offset, (mistake, expected) in enumerate(MISTAKES.items()):
        assert expected in by_line.get(first + offset, ""), f"{mistake}: mypy said {by_line.get(first + offset)!r}"
    assert len(found) == len(MISTAKES), "\n".join(map(str, found))


def _declared_all(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            value = node.value
            assert isinstance(value, (ast.List, ast.Tuple)), "__all__ as a literal list: type checkers read no other"
            return [ast.literal_eval(element) for element in value.elts]
    return None


@pytest.mark.parametrize("path", public_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_public_module_spells_out_its_exports(path: Path):
    declared = _declared_all(ast.parse(path.read_text(encoding="utf-8")))
    assert declared is not None, f"{path.relative_to(ROOT)}: no __all__"
    module = importlib.import_module(_module_name(path))
    assert [name for name in declared if not hasattr(module, name)] == []


def _type_checking_imports(tree: ast.Module) -> dict[str, str]:
    """``name -> module`` of the ``from m import name`` lines under ``if TYPE_CHECKING:``."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom):
                    found.update({alias.asname or alias.name: statement.module for alias in statement.names})
    return found


LAZY = [p for p in public_modules() if p.name == "__init__.py" and "lazy_exports(" in p.read_text(encoding="utf-8")]


def test_the_lazy_packages_are_found():
    assert {_module_name(p) for p in LAZY} >= {"harness", "harness.paidapi", "harness.proxy"}


@pytest.mark.parametrize("path", LAZY, ids=_module_name)
def test_a_lazy_package_lists_each_name_alike_for_run_time_and_for_type_checkers(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = importlib.import_module(_module_name(path))
    assert _type_checking_imports(tree) == package._EXPORTS
    assert set(_declared_all(tree) or []) - {"__version__"} == set(package._EXPORTS)
    for name, module in package._EXPORTS.items():
        assert getattr(package, name) is getattr(importlib.import_module(module), name)


def _scenario_files() -> list[Path]:
    return [p for folder in SCENARIO_FOLDERS for p in sorted(folder.rglob("*.py"))]


def test_scenarios_import_only_public_names():
    found = {(path.relative_to(ROOT).as_posix(), use) for path in _scenario_files()
             for use in private_uses(path.read_text(encoding="utf-8"))}
    assert found == set()


@pytest.mark.parametrize("source, private", [
    ("from harness.faults._proc import process_tree", "from harness.faults._proc import process_tree"),
    ("import harness._wait", "import harness._wait"),
    ("from harness import _lazy", "from harness import _lazy"),
    ("from harness.run import _private", "from harness.run import _private"),
    ("from harness.history import vocabulary as v\nv._hidden", "v._hidden"),
    ("def f(jq):\n    jq.faults._kept.clear()", "jq.faults._kept"),
    ("from harness.history import Event\nfrom harness.run import Path", "from harness.run import Path"),
])
def test_the_public_names_rule_sees_each_private_use(source: str, private: str):
    assert private_uses(textwrap.dedent(source)) == [private]


def test_the_public_names_rule_lets_public_names_and_dunders_pass():
    assert private_uses("from harness import Run, wait_until\nfrom harness.history import vocabulary as v\n"
                        "import harness\nv.__name__\nharness.__version__\ndef f(jq):\n    jq.faults.kill_worker()") == []
