"""The plugin heals every fault a scenario left injected before it settles and judges the run."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

TINYAPP_DIR = Path(__file__).parent.parent / "tinyapp"
SCENARIO = '''
def test_faults_left_injected(jq):
    jq.faults.proxy_down("paidapi")
    jq.faults.hold_database_connections()  # unhealed, the judge could not read the database
'''


def test_faults_left_injected_are_healed_before_the_verdict(pytester: pytest.Pytester):
    pytester.makepyfile(tinyapp=(TINYAPP_DIR / "tinyapp.py").read_text(), test_scenario=SCENARIO)
    pytester.makefile(".toml", pyproject=(TINYAPP_DIR / "pyproject.toml").read_text())
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    folder = next((pytester.path / ".jobquake" / "artifacts").glob("*test_faults_left_injected*"))
    events = [json.loads(line) for line in (folder / "history.jsonl").read_text().splitlines()]
    faults = [(e["type"], e["name"], e["data"]["fault"]) for e in events if e["source"] == "fault"]
    assert faults[-4:] == [("invoke", "heal", "hold_database_connections"),
                           ("ok", "heal", "hold_database_connections"),
                           ("invoke", "heal", "proxy_down"), ("ok", "heal", "proxy_down")]
    assert json.loads((folder / "verdict.json").read_text())["valid"] is True
