"""``jobquake report DIR``: re-check stored artifacts and re-render the timeline."""
from __future__ import annotations

import io
import json
import subprocess
import sys

from harness.checks import GLOBAL_INVARIANTS, Result, Verdict, run_checks, timeout_labelled
from harness.history.builder import HistoryBuilder
from harness.history.synthetic import synthetic_run
from harness.report import find_artifact_dirs, load_artifacts, report_main, write_artifacts


def store(root, bugs=(), **kwargs):
    history, snapshot = synthetic_run(jobs=6, seed=4, bugs=bugs)
    verdict = run_checks(GLOBAL_INVARIANTS, history, snapshot)
    return write_artifacts(root, history, snapshot, verdict, title="t", seed=11, nodeid=kwargs.get("nodeid"))


def run(*argv) -> tuple[int, str]:
    out = io.StringIO()
    return report_main(list(argv), out=out), out.getvalue()


def test_layout_is_written_and_read_back(tmp_path):
    root = store(tmp_path / "scenario")
    assert sorted(p.name for p in root.iterdir()) == [
        "history.jsonl", "logs", "snapshot.json", "timeline.html", "verdict.json"]
    stored = load_artifacts(root)
    assert len(stored.history) > 50 and len(stored.snapshot.jobs) == 6
    assert stored.stored["checks"] == ["every_job_terminal", "no_double_billing", "no_lost_submission"]
    assert stored.stored["seed"] == 11


def test_rerun_of_an_invalid_run_exits_1_and_rewrites_verdict_and_timeline(tmp_path):
    root = store(tmp_path / "bad", bugs=["double_billing"], nodeid="scenarios/test_k.py::test_k")
    (root / "timeline.html").unlink()
    (root / "verdict.json").write_text(json.dumps({"checks": ["no_double_billing"], "seed": 11,
                                                   "nodeid": "scenarios/test_k.py::test_k"}))
    code, out = run(str(root))
    assert code == 1
    assert f"{root}: invalid" in out
    assert "no_double_billing [invalid]" in out and "--jobquake-seed=11" in out
    assert (root / "timeline.html").read_text().count("DUPLICATE BILLING") >= 2
    rewritten = json.loads((root / "verdict.json").read_text())
    assert rewritten["valid"] is False and rewritten["checks"] == ["no_double_billing"]


def test_rerun_of_a_folder_of_runs_prints_a_table(tmp_path):
    store(tmp_path / "a", nodeid="scenarios/test_a.py::test_a")
    store(tmp_path / "b", nodeid="scenarios/test_b.py::test_b")
    code, out = run(str(tmp_path))
    assert code == 0
    assert "test_a.py::test_a" in out and "test_b.py::test_b" in out
    assert "2 scenario(s): 2 valid, 0 invalid, 0 unknown" in out
    assert find_artifact_dirs(tmp_path) == [tmp_path / "a", tmp_path / "b"]


def test_rerun_keeps_checker_options_and_results_it_cannot_recompute(tmp_path):
    b = HistoryBuilder()
    b.call("j1", 0.0, 3.0, attempt=1)
    b.row("j1", "failed", reason="error")
    history, snapshot = b.history(), b.snapshot()
    verdict = run_checks([timeout_labelled], history, snapshot, {"timeout_labelled": {"deadline": 2.0}})
    custom = Result("app_specific", True, "fine")
    write_artifacts(tmp_path, history, snapshot, Verdict(verdict.results + (custom,), verdict.options), "t")
    code, out = run(str(tmp_path))
    assert code == 1 and "timeout_labelled [invalid]" in out
    again = json.loads((tmp_path / "verdict.json").read_text())
    assert [r["name"] for r in again["results"]] == ["timeout_labelled", "app_specific"]
    assert again["options"] == {"timeout_labelled": {"deadline": 2.0}}


def test_without_a_snapshot_the_snapshot_checks_are_unknown(tmp_path):
    root = store(tmp_path / "x")
    (root / "snapshot.json").unlink()
    code, out = run(str(root), "--no-html")
    assert code == 0 and f"{root}: unknown" in out


def test_bad_arguments_exit_2(tmp_path):
    assert run(str(tmp_path))[0] == 2
    store(tmp_path / "x")
    code, out = run(str(tmp_path), "--checks", "no_such_check")
    assert code == 2 and "no_such_check" in out


def test_python_dash_m_entry_point(tmp_path):
    store(tmp_path / "x", bugs=["stuck"])
    proc = subprocess.run([sys.executable, "-m", "harness.report", str(tmp_path), "--ascii"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert "every_job_terminal [invalid]" in proc.stdout and "FAIL" in proc.stdout


def test_a_damaged_folder_is_skipped_with_its_reason_and_the_others_reported(tmp_path):
    good = store(tmp_path / "good")
    bad_bytes = store(tmp_path / "not_utf8")
    (bad_bytes / "history.jsonl").write_bytes(b'{"index": 0}\n\xff\xfe garbage\n')
    bad_json = store(tmp_path / "not_json")
    (bad_json / "history.jsonl").write_text("{not json\n{\"index\": 1}\n")
    code, out = run(str(tmp_path))
    assert code == 1
    assert f"{bad_bytes}: skipped, damaged: not UTF-8" in out
    assert f"{bad_json}: skipped, damaged: ValueError" in out and "line 1 is not JSON" in out
    assert f"{good}: valid" in out
    assert "2 folder(s) skipped as damaged" in out


def test_a_stored_run_without_its_evidence_reports_unknown_not_valid(tmp_path):
    b = HistoryBuilder()
    b.submit("j1", 0.0)
    b.state("j1", 0.1, "done", attempt=1)
    b.row("j1", "done")  # the ledger was never read: no paid-API event, no read record
    verdict = Verdict((Result("no_double_billing", True, "stored as valid"),))
    root = write_artifacts(tmp_path / "r", b.history(), b.snapshot(), verdict, title="t", seed=1)
    code, out = run(str(root))
    assert f"{root}: unknown" in out and "the paid API ledger was not read" in out
    assert json.loads((root / "verdict.json").read_text())["valid"] == "unknown"
