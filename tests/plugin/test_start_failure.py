"""A stack that does not start is told once, in one paragraph: what, where, what to do, where its log is kept.

Before, a wrong ``redis_binary`` printed 45 lines for every test, and an app
process that never became ready 209 lines of chained tracebacks, with the
clear sentence last.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.plugin.test_plugin import PYPROJECT, TINYAPP

pytestmark = pytest.mark.integration

THREE = """
def test_one(jq): pass
def test_two(jq): pass
def test_three(jq): pass
"""
NEVER_READY = """
[tool.jobquake.processes.api]
command = '''python -c "import time; print('api starting', flush=True); time.sleep(60)"'''
ready = "http:/health"
start_timeout = 1
"""
PARAGRAPH = "jobquake: the stack did not start, so no scenario of this session ran."


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(tinyapp=TINYAPP, test_three=THREE)
    return pytester


def told_once(result: pytest.RunResult) -> str:
    """The paragraph, checked to be shown once, with one line for each other test and no traceback
    (above pytest's short summary, which repeats each error's first line: in full where CI is set)."""
    out = result.stdout.str().split(" short test summary info ")[0]
    result.assert_outcomes(errors=3)
    assert out.count(PARAGRAPH) == 1, out
    assert len(re.findall(r"jobquake: the stack did not start \(see test_three.py::test_one\)", out)) == 2, out
    assert "Traceback" not in out and "harness/" not in out.replace(str(Path.cwd()), ""), out
    (paragraph,) = [line for line in out.splitlines() if PARAGRAPH in line]
    return paragraph


def test_a_missing_server_binary_is_one_paragraph_with_the_install_command(project):
    project.makefile(".toml", pyproject=PYPROJECT)
    result = project.runpytest_subprocess("-p", "no:cacheprovider", "--jobquake-redis-binary=/nonexistent/redis-server")
    paragraph = told_once(result)
    assert "redis-server not found in /nonexistent/redis-server (from config)" in paragraph
    assert "apt-get install -y redis-server" in paragraph
    assert len(result.stdout.lines) < 40, result.stdout.str()  # the whole run, three tests included


def test_an_app_that_never_gets_ready_is_one_paragraph_naming_its_kept_log(project):
    project.makefile(".toml", pyproject=PYPROJECT + NEVER_READY)
    result = project.runpytest_subprocess("-p", "no:cacheprovider")
    paragraph = told_once(result)
    assert "[api] did not become ready within 1.0s" in paragraph and "start_timeout" in paragraph
    assert re.search(r"Its log ends: .*api starting\. Look at why in its log: ", paragraph), paragraph
    log = Path(re.search(r"its log: (\S+\.log)", paragraph).group(1))
    assert log.read_text().strip().endswith("api starting"), "the log named is kept after the run"
