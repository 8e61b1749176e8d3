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
    # nothing ran through the faults: judged unknown, which this test lets pass to look at the healing
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--jobquake-on-unknown=warn")
    result.assert_outcomes(passed=1, warnings=4)
    folder = next((pytester.path / ".jobquake" / "artifacts" / "latest").glob("*test_faults_left_injected*"))
    events = [json.loads(line) for line in (folder / "history.jsonl").read_text().splitlines()]
    faults = [(e["type"], e["name"], e["data"]["fault"]) for e in events if e["source"] == "fault"]
    assert faults[-4:] == [("invoke", "heal", "hold_database_connections"),
                           ("ok", "heal", "hold_database_connections"),
                           ("invoke", "heal", "proxy_down"), ("ok", "heal", "proxy_down")]
    verdict = {r["name"]: r for r in json.loads((folder / "verdict.json").read_text())["results"]}
    assert {name: r["valid"] for name, r in verdict.items()} == {
        "every_job_terminal": "unknown", "no_double_billing": "unknown", "no_lost_submission": "unknown",
        "faults_landed": "unknown", "no_interference": True}
    assert [e["why"] for e in verdict["faults_landed"]["details"]["effects"]] == [
        "proxy_down was set, but the app logged no refused connection while it was (it made no "
        "attempt, or the fault was healed first)",
        "hold_database_connections was set, but the app logged no refused or timed-out connection "
        "checkout while it was (it made no attempt, or the fault was healed first)"]
