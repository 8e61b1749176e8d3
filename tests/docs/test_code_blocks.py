"""Every code block of the hand-written docs pages is checked against the real project.

Python blocks compile, import only what exists and only public names (no
``harness._x``, ``tests.common.public_names``), and use only names of the
real API: ``jq.<attr>`` chains, faults built with the block's own arguments,
methods of what those return, invariants named in markers
(``python_blocks``); and they pass mypy as the scenarios do (``typed_blocks``:
a fragment runs inside a function of ``jq: Run``). TOML blocks are read by the real config
resolver, so an unknown key or a bad value fails here. Shell blocks use only
programs, subcommands, options and make targets that exist (``commands``).
YAML blocks are the CI recipes of examples/ci/, included from their files.
Whole scenarios (a ``test_`` function taking ``jq``) are run against the
reference app by ``test_scenarios.py``.
"""
from __future__ import annotations

import tomllib

import pytest

from tests.common.public_names import private_uses
from tests.common.typecheck import mypy
from tests.docs import commands, python_blocks, typed_blocks
from tests.docs.blocks import DOCS, PAGES, ROOT, Block, all_blocks, block_id

CHECKED = {"python", "toml", "sh", "yaml"}
UNCHECKED = {"text"}  # output a reader sees, not input: marked as such on purpose
GENERATED = {"mermaid"}  # drawn from the code, checked where it is drawn (tests/quality/test_architecture_doc.py)


def test_the_checked_pages_include_the_tutorial_and_how_to_pages():
    names = {p.relative_to(DOCS).as_posix() for p in PAGES if DOCS in p.parents}
    assert {"tutorial/first-scenario.md", "tutorial/your-app.md", "howto/write-a-scenario.md",
            "howto/faults.md", "howto/ci.md", "howto/nightly.md", "howto/localstack.md"} <= names


@pytest.mark.parametrize("block", all_blocks(), ids=block_id)
def test_every_block_names_a_language_that_is_checked(block: Block):
    assert block.lang in CHECKED | UNCHECKED | GENERATED, f"{block.where}: a ```{block.lang} block: name its language " \
                                              f"({', '.join(sorted(CHECKED))}; text for output)"


@pytest.mark.parametrize("block", all_blocks("python"), ids=block_id)
def test_python_blocks_use_only_the_real_api(block: Block):
    assert python_blocks.problems(block.text) == []
    assert private_uses(block.text) == []


def test_python_blocks_pass_mypy(tmp_path):
    """The blocks as mypy sees them, scenarios and fragments alike: what an IDE would underline."""
    files = typed_blocks.write(all_blocks("python"), tmp_path / "blocks")
    found = mypy(list(files))
    assert [f"{files[f.path].where}: {typed_blocks.line_of(f)}: {f.message}" for f in found] == []


def test_the_mypy_check_of_blocks_can_fail(tmp_path):
    page = DOCS / "howto" / "faults.md"
    wrong = [Block(page, 1, "python", "jq.faults.kill_worker(wrker='worker1')"),
             Block(page, 2, "python", "kill = jq.faults.kill_worker()\nkill.wiat(timeout=job_timeout)")]
    files = typed_blocks.write(wrong, tmp_path / "blocks")
    found = mypy(list(files))
    assert ['Unexpected keyword argument "wrker"' in f.message or '"KillWorker" has no attribute "wiat"' in f.message
            for f in found] == [True, True], found


def _validate_toml(text: str, tmp_path) -> None:
    from harness.config import resolve
    from harness.nightly.settings import NightlySettings
    from harness.stack.stack import PROCESS_KEYS

    data = tomllib.loads(text)
    assert "jobquake" in data.get("tool", {}), "a TOML block names its table ([tool.jobquake...])"
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(text, encoding="utf-8")
    config = resolve(environ={}, pyproject=pyproject)
    for name, spec in config.processes.items():
        assert "command" in spec and set(spec) <= PROCESS_KEYS, f"processes.{name}: {sorted(spec)}"
    NightlySettings.from_config(config)


@pytest.mark.parametrize("block", all_blocks("toml"), ids=block_id)
def test_toml_blocks_are_valid_config(block: Block, tmp_path):
    _validate_toml(block.text, tmp_path)


def test_the_toml_check_can_fail(tmp_path):
    from harness.errors import ConfigError

    with pytest.raises(ConfigError, match="did you mean 'workers'"):
        _validate_toml('[tool.jobquake]\nworker = 2\n', tmp_path)
    with pytest.raises(ConfigError):
        _validate_toml('[tool.jobquake.nightly]\nrates = 5\n', tmp_path)


@pytest.mark.parametrize("block", all_blocks("sh"), ids=block_id)
def test_shell_blocks_run_commands_that_exist(block: Block):
    lines = commands.lines(block.text)
    assert lines, f"{block.where}: an empty shell block"
    assert {line: commands.problems(line) for line in lines if commands.problems(line)} == {}


@pytest.mark.parametrize("block", all_blocks("yaml"), ids=block_id)
def test_yaml_blocks_are_the_ci_recipes_themselves(block: Block):
    assert block.snippet is not None and block.snippet.parent == ROOT / "examples" / "ci", \
        f"{block.where}: show YAML from a tested file of examples/ci/ (--8<-- \"examples/ci/...\")"
    assert block.snippet.is_file()


def test_the_python_check_can_fail():
    assert python_blocks.problems("jq.faults.kill_worker(when=Queued())")  # a broker moment names no worker
    assert python_blocks.problems("jq.faults.network_toxic('paidapi', 'latency', latencey=5)")
    assert python_blocks.problems("jq.settle_down()")
    assert python_blocks.problems("from harness.faults._proc import process_tree")
    assert python_blocks.problems("kill = jq.faults.kill_worker()\nkill.wiat()")
    assert python_blocks.problems("import pytest\n@pytest.mark.jobquake(checks=['no_such'])\ndef f(): pass")
    assert python_blocks.problems("gate = jq.paidapi.gate(job_id='1')\ngate.release_all()")


def _first_python(page) -> str:
    return next(b.text for b in all_blocks("python", [page]))


def test_the_readme_scenario_is_the_tutorials():
    """The README's scenario is the tutorial's, which test_scenarios.py runs."""
    assert _first_python(ROOT / "README.md") == _first_python(DOCS / "tutorial" / "first-scenario.md")


def test_the_readme_stays_short():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 200
