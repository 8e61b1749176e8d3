"""A root of run folders that another user planted stops the session in one paragraph, before anything starts.

Before, the refusal was right but came as 58 to 78 lines of traceback, for every test.
"""
from __future__ import annotations

import os

import pytest

from tests.plugin.test_plugin import PYPROJECT, TINYAPP

pytestmark = pytest.mark.integration

TWO = """
def test_one(jq): pass
def test_two(jq): pass
"""


def test_a_planted_root_is_refused_once_in_one_paragraph(attacker, shared_tmp, pytester, monkeypatch):
    planted = shared_tmp / f"jobquake-runs-{os.geteuid()}"
    done = attacker.python(f"import os\nos.mkdir({str(planted)!r}, 0o777)\nos.chmod({str(planted)!r}, 0o777)\n")
    assert done.returncode == 0, done.stderr
    pytester.makepyfile(tinyapp=TINYAPP, test_two=TWO)
    pytester.makefile(".toml", pyproject=PYPROJECT)
    monkeypatch.setenv("TMPDIR", str(shared_tmp))  # where this session's run folders would go
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(errors=2)
    out = result.stdout.str().split(" short test summary info ")[0]  # which repeats it, in full where CI is set
    (paragraph,) = [line for line in out.splitlines() if "the stack did not start, so no scenario" in line]
    assert f"{planted}: owned by uid {attacker.uid}, not by this user" in paragraph
    assert "Remove it, or point TMPDIR elsewhere" in paragraph
    assert "jobquake: the stack did not start (see test_two.py::test_one)" in out
    assert "Traceback" not in out and len(result.stdout.lines) < 30, out
    assert sorted(os.listdir(planted)) == [], "nothing was made in the planted folder"
