"""The wheel users install: the harness with its package data, and nothing of the repository's own apps."""
from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# what a checkout holds that a build must not see: venvs, caches, earlier builds (a stale
# build/lib would be packed into the wheel), run state
LEFT_OUT = shutil.ignore_patterns(".venv", ".git", ".jobquake", "build", "dist", "*.egg-info", "__pycache__",
                                  ".benchmarks", ".pytest_cache")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    """The wheel built from a clean copy of this checkout (the venv's setuptools, no download)."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    shutil.copytree(ROOT, source, ignore=LEFT_OUT)
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                           "--no-index", "-q", "-w", str(work / "dist"), str(source)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"pip wheel failed (make setup installs the dev extra):\n{proc.stderr[-3000:]}"
    [built] = (work / "dist").glob("jobquake-*.whl")
    with zipfile.ZipFile(built) as archive:
        yield archive


def top_level(archive: zipfile.ZipFile) -> set[str]:
    return {name.split("/", 1)[0] for name in archive.namelist()}


def test_the_wheel_holds_the_harness_and_its_metadata_only(wheel):
    assert {name for name in top_level(wheel) if not name.endswith(".dist-info")} == {"harness"}


def test_the_reference_app_scenarios_and_tests_are_not_shipped(wheel):
    shipped = [name for name in wheel.namelist() if name.split("/", 1)[0] in ("refapp", "scenarios", "tests")]
    assert shipped == []


def test_package_data_is_shipped(wheel):
    names = set(wheel.namelist())
    # the instrumentation's sitecustomize (a folder without __init__.py), the scaffold's templates,
    # the report's assets and the paid API's wire formats
    for needed in ("harness/instrument/boot/sitecustomize.py", "harness/scaffold/templates.py",
                   "harness/report/html_assets.py", "harness/paidapi/formats/openai_chat.py",
                   "harness/pytest_plugin.py"):
        assert needed in names, needed
    sources = {p.relative_to(ROOT).as_posix() for p in (ROOT / "harness").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts}
    assert sources - names == set(), "files of harness/ missing from the wheel"


def test_the_wheel_says_it_is_typed(wheel):
    """PEP 561: ``py.typed`` makes type checkers read the installed harness's annotations."""
    assert "harness/py.typed" in wheel.namelist()


def test_the_entry_points_are_declared(wheel):
    [entry_points] = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    text = wheel.read(entry_points).decode()
    assert "jobquake = harness.cli:main" in text and "jobquake = harness.pytest_plugin" in text
