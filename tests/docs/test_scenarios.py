"""The whole scenarios the tutorial and how-to pages show pass against the reference app, and the
tutorial's catches the bug the tutorial says it catches.

Each scenario block is written to a file of its own and run in one pytest
session against refapp (the shipped scenarios' ``refapp`` fixture loaded as a
plugin), as a reader who saved it under ``scenarios/`` would run it. Whole
sessions: the slow tier.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs import python_blocks
from tests.docs.blocks import DOCS, ROOT, Block, all_blocks

pytestmark = pytest.mark.integration

PAGES = sorted([*DOCS.glob("tutorial/*.md"), *DOCS.glob("howto/*.md")])
TUTORIAL = DOCS / "tutorial" / "first-scenario.md"
# what the tutorial says its scenario catches, and by which invariant
TUTORIAL_MUTANT, TUTORIAL_INVARIANT = "fresh-idempotency-key", "no_double_billing"


def scenario_blocks() -> list[Block]:
    return [b for b in all_blocks("python", PAGES) if python_blocks.is_scenario(b.text)]


def _write(blocks: list[Block], folder: Path) -> int:
    """One test file per block; the number of test functions written."""
    count = 0
    for index, block in enumerate(blocks):
        name = re.sub(r"\W+", "_", block.page.relative_to(DOCS).with_suffix("").as_posix())
        (folder / f"test_{name}_{index}.py").write_text(block.text, encoding="utf-8")
        count += len(re.findall(r"^def test_\w+\(jq", block.text, re.M))
    return count


def _pytest(folder: Path, tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "pytest", str(folder), "-p", "scenarios.conftest", "-p", "no:cacheprovider",
               f"--rootdir={ROOT}", "-c", str(ROOT / "pyproject.toml"), "-q",
               f"--jobquake-artifacts={tmp_path / 'artifacts'}"]
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    if "REFAPP_MUTANT" not in env:  # the session picks its mutant from here: none unless asked
        environ.pop("REFAPP_MUTANT", None)
    return subprocess.run(command, cwd=ROOT, env=environ, capture_output=True, text=True, timeout=600)


def test_the_pages_show_whole_scenarios():
    pages = {b.page for b in scenario_blocks()}
    assert {TUTORIAL, DOCS / "howto" / "write-a-scenario.md"} <= pages


def test_every_scenario_the_docs_show_passes_against_refapp(tmp_path):
    folder = tmp_path / "scenarios"
    folder.mkdir()
    count = _write(scenario_blocks(), folder)
    proc = _pytest(folder, tmp_path)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert f"{count} passed" in proc.stdout, proc.stdout[-3000:]


def test_the_tutorials_scenario_catches_the_bug_it_names(tmp_path):
    folder = tmp_path / "scenarios"
    folder.mkdir()
    tutorial = [b for b in scenario_blocks() if b.page == TUTORIAL][:1]
    _write(tutorial, folder)
    text = TUTORIAL.read_text(encoding="utf-8")
    assert f"REFAPP_MUTANT={TUTORIAL_MUTANT}" in text and f"{TUTORIAL_INVARIANT} [invalid]" in text
    proc = _pytest(folder, tmp_path, REFAPP_MUTANT=TUTORIAL_MUTANT)
    assert proc.returncode == 1, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert f"{TUTORIAL_INVARIANT} [invalid]" in proc.stdout and "1 failed" in proc.stdout, proc.stdout[-6000:]
