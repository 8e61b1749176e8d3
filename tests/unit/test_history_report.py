"""Report rendering: the HTML timeline, JSON, JUnit properties, the terminal table."""
from __future__ import annotations

import json
from html.parser import HTMLParser

from harness.checks import ALL_CHECKERS, GLOBAL_INVARIANTS, Verdict, run_checks
from harness.history.builder import HistoryBuilder
from harness.history.synthetic import DEADLINE, synthetic_run
from harness.report import junit_properties, read_json, render_html, summary_lines, write_json
from harness.report.timeline_model import build_model

OPTIONS = {"timeout_labelled": {"deadline": DEADLINE}}


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.links += [value or "" for name, value in attrs if name in ("src", "href", "xlink:href")]


def buggy_page() -> str:
    history, snapshot = synthetic_run(jobs=12, seed=2, bugs=["double_billing", "stuck"])
    verdict = run_checks(ALL_CHECKERS, history, snapshot, OPTIONS)
    return render_html(history, verdict, snapshot, "kill mid call")


def test_html_is_self_contained():
    page = buggy_page()
    parser = _Links()
    parser.feed(page)
    assert not [link for link in parser.links if "//" in link or link.startswith(("http", "data:"))]
    assert "link" not in parser.tags and "img" not in parser.tags and "iframe" not in parser.tags
    assert "<style>" in page and "<script>" in page and "<svg" in page
    assert "http://" not in page and "https://" not in page


def test_html_shows_verdict_duplicates_faults_failpoints_and_counterexamples():
    page = buggy_page()
    assert '<span class="badge invalid">invalid</span>' in page
    assert "DUPLICATE BILLING" in page and 'stroke="#dc2626" stroke-width="2.5"' in page
    assert "⚡ paidapi_latency" in page
    assert "failpoint ok submit.after_job_write" in page
    assert "<h2>Counterexamples</h2>" in page and "no_double_billing [invalid]" in page
    assert page.count("<h3>job job-") == 2  # a close-up of each job named by a counterexample


def test_html_escapes_everything_it_did_not_write():
    b = HistoryBuilder()
    b.state("<img src=x onerror=alert(1)>", 0.0, "running", attempt=1)
    page = render_html(b.history(), None, None, "<script>alert('title')</script>")
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;script&gt;" in page and "&lt;img src=x" in page


def test_html_of_an_empty_history_renders():
    page = render_html(HistoryBuilder().history(), Verdict(()), None, "empty")
    assert "0 events" in page and "</html>" in page


def test_model_draws_flagged_jobs_first_with_their_states_and_calls():
    history, snapshot = synthetic_run(jobs=12, seed=2, bugs=["stuck"])
    verdict = run_checks(GLOBAL_INVARIANTS, history, snapshot)
    model = build_model(history, verdict, snapshot)
    stuck = model.jobs[0]
    assert stuck.flagged and stuck.final_state == "running"
    assert [bar.state for bar in stuck.bars] == ["queued", "running"]
    assert stuck.bars[-1].end == model.duration and not stuck.bars[-1].final
    assert not any(lane.flagged for lane in model.jobs[1:])
    assert all(lane.calls for lane in model.jobs)
    assert [w.label for w in model.windows] == ["paidapi_latency"]


def test_model_caps_the_lanes_and_keeps_an_unhealed_fault_open():
    b = HistoryBuilder()
    for n in range(5):
        b.state(f"j{n}", n, "running", attempt=1)
    b.fault("broker_down", 1.0, None)
    model = build_model(b.history(), None, None, max_lanes=3)
    assert (len(model.jobs), model.hidden_jobs) == (3, 2)
    assert model.windows[0].label == "broker_down (never healed)" and model.windows[0].end == 4.0


def verdicts() -> dict[str, Verdict]:
    good = run_checks(GLOBAL_INVARIANTS, *synthetic_run(jobs=5, seed=1))
    bad = run_checks(GLOBAL_INVARIANTS, *synthetic_run(jobs=5, seed=1, bugs=["lost"]))
    return {"scenarios/test_a.py::test_good": good, "scenarios/test_b.py::test_bad": bad}


def test_json_report_round_trips(tmp_path):
    path = tmp_path / "out" / "run.json"
    write_json(path, verdicts(), meta={"seed": 3})
    raw = json.loads(path.read_text())
    assert raw["valid"] is False and raw["meta"] == {"seed": 3}
    assert raw["summary"] == {"tests": 2, "valid": 1, "invalid": 1, "unknown": 0}
    assert read_json(path) == verdicts()


def test_junit_properties():
    bad = verdicts()["scenarios/test_b.py::test_bad"]
    props = dict(junit_properties(bad, seed=9, artifacts_path="/tmp/a"))
    assert props["jobquake.verdict"] == "invalid"
    assert props["jobquake.every_job_terminal"] == "valid"
    assert props["jobquake.no_lost_submission"] == "invalid"
    assert props["jobquake.no_lost_submission.message"].startswith("1 of 5 accepted submissions lost")
    assert "jobquake.every_job_terminal.message" not in props
    assert (props["jobquake.seed"], props["jobquake.artifacts"]) == ("9", "/tmp/a")


def test_the_invalid_invariants_read_back_from_the_properties_are_the_verdicts():
    from harness.report.junit import invalid_in

    bad = verdicts()["scenarios/test_b.py::test_bad"]
    assert invalid_in(junit_properties(bad, seed=9)) == {r.name for r in bad.results if r.valid is False} == {
        "no_lost_submission"}
    assert invalid_in(junit_properties(verdicts()["scenarios/test_a.py::test_good"])) == set()


def test_terminal_summary_table():
    lines = summary_lines(verdicts())
    assert lines[0].split() == ["scenario", "terminal", "billing", "lost"]
    assert lines[1].split() == ["test_a.py::test_good", "✓", "✓", "✓"]
    assert lines[2].split() == ["test_b.py::test_bad", "✓", "✓", "✗"]
    assert lines[-1] == "2 scenario(s): 1 valid, 1 invalid, 0 unknown"
    assert summary_lines(verdicts(), ascii=True)[2].split()[-1] == "FAIL"
    assert summary_lines({}) == []
