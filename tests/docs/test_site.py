"""The docs site builds with warnings as errors: every page in the nav, every link and anchor resolves,
every included file exists."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from tests.docs.blocks import ROOT


def test_mkdocs_builds_the_site_strictly(tmp_path):
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        if os.environ.get("CI"):
            pytest.fail("mkdocs / mkdocs-material are not installed: install the docs extra (make docs)")
        pytest.skip("mkdocs / mkdocs-material not installed: pip install -e '.[docs]' (make docs)")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stderr[-5000:]
    assert (tmp_path / "site" / "tutorial" / "first-scenario.html").is_file()
    assert (tmp_path / "site" / "reference" / "invariants.html").is_file()
