"""The nightly report page and the merge of shards, from stored JSON (no services)."""
from __future__ import annotations

import json
from pathlib import Path

from harness.nightly.schedule import Planned, Schedule
from harness.nightly.shards import merge, shard_command
from harness.nightly.stats import JobLife, fault_effects, percentile, series
from harness.history.history import History


def shard_json(folder: Path, shard: str, valid, stuck: int = 0, in_transit: int | None = None) -> Path:
    folder.mkdir(parents=True)
    schedule = Schedule(seed=int(shard[0]) + 10, duration=30.0, rate=5.0, concurrency=4, job_bound=20.0,
                        faults=(Planned(at=3.0, lasts=4.0, kind="kill", spec={"fault": "kill_worker", "when": "now"}),),
                        shard=shard)
    results = [{"name": "no_job_stuck", "valid": valid, "message": f"{stuck} stuck",
                "counterexample": [{"job_id": "j1"}] if valid is False else []}]
    data = {"seed": schedule.seed, "shard": shard, "valid": valid, "exit_code": 0, "wall_s": 31.0, "check_s": 0.02,
            "schedule": schedule.to_dict(), "verdict": {"valid": valid, "results": results},
            "jobs": {"submitted": 150, "accepted": 150, "done": 149, "failed": 1, "in_flight": 0, "stuck": stuck,
                     "duplicate_calls": 0, "throughput": 5.0, "p50_s": 0.3, "p99_s": 2.1},
            "series": [{"t": float(t), "width": 1.0, "throughput": 5.0, "p50": 0.3, "p99": 2.0} for t in range(30)],
            "faults": [{"index": 0, "kind": "kill", "label": "kill", "spec": {"fault": "kill_worker", "when": "now"},
                        "planned_at": 3.0, "planned_lasts": 4.0, "injected_at": 3.0, "healed_at": 7.5,
                        "error": None, "injected": True, "landed": True, "jobs_affected": 21, "retried": 2,
                        "recovery_s": 1.2}],
            "artifacts": str(folder / "run")}
    if in_transit is not None:  # a run stored before the count was kept has none
        data["jobs"]["in_transit"] = in_transit
    (folder / "nightly.json").write_text(json.dumps(data))
    return folder


def test_merging_two_shards_gives_one_report_whose_verdict_is_the_worst(tmp_path, capsys):
    a = shard_json(tmp_path / "shard-0", "0/2", True)
    b = shard_json(tmp_path / "shard-1", "1/2", False, stuck=1, in_transit=2)
    assert merge([a, b], tmp_path / "merged") == 1
    merged = json.loads((tmp_path / "merged" / "nightly.json").read_text())
    assert merged["shards"] == 2 and merged["valid"] is False
    assert merged["jobs"]["accepted"] == 300 and merged["jobs"]["stuck"] == 1 and merged["faults_injected"] == 2
    assert merged["jobs"]["in_transit"] == 2
    page = (tmp_path / "merged" / "report.html").read_text()
    assert page.count("lost on the way while a defence was off") == 1  # shard 1's, not shard 0's
    assert page.count("<svg") == 4 and "shard 0/2" in page and "shard 1/2" in page
    assert "kill" in page and "recovery" in page and "&quot;job_id&quot;: &quot;j1&quot;" in page
    assert "replay: jobquake nightly --replay" in capsys.readouterr().out


def test_merging_valid_shards_is_valid_and_a_missing_shard_is_an_error(tmp_path):
    a = shard_json(tmp_path / "shard-0", "0/2", True)
    b = shard_json(tmp_path / "shard-1", "1/2", True)
    assert merge([a, b]) == 0
    assert merge([a, tmp_path / "nowhere"]) == 2


def test_a_shard_command_carries_the_run_settings(tmp_path):
    import argparse

    args = argparse.Namespace(duration=60.0, faults="kill,hang", rate=5.0, concurrency=None, job_bound=None,
                              fault_every=None, mutant=None)
    cmd = shard_command(args, 7, 1, 3, tmp_path)
    assert cmd[2:] == ["harness.cli", "nightly", "--seed", "7", "--shard", "1/3", "--out", str(tmp_path),
                       "--no-shrink", "--duration", "60s", "--faults", "kill,hang", "--rate", "5.0"]


def test_latency_series_and_fault_effects():
    lives = [JobLife("a", 0.0, 1.0, False), JobLife("b", 2.0, 9.0, True), JobLife("c", 12.0, 12.5, False)]
    rows = series(lives, span=15.0, buckets=15)
    assert rows[1]["throughput"] == 1.0 and rows[1]["p50"] == 1.0 and rows[9]["p99"] == 7.0
    window = {"injected_at": 3.0, "healed_at": 5.0, "spec": {"fault": "kill_worker"}, "params": {}}
    effects = fault_effects(window, lives, History([]), 0.0)
    assert effects["jobs_affected"] == 1 and effects["retried"] == 1 and effects["recovery_s"] == 4.0
    assert effects["landed"] is False  # no "fault ok inject" event: no evidence it landed
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0 and percentile([], 99) is None


def test_the_timelines_link_says_counterexamples_only_when_there_are_some(tmp_path):
    from harness.nightly.report import write_html

    runs = {valid: json.loads((shard_json(tmp_path / str(valid), "0/1", valid) / "nightly.json").read_text())
            for valid in (True, False)}
    page = write_html([runs[True]], tmp_path / "valid.html", timeline=tmp_path / "timeline.html").read_text()
    assert "job timelines:" in page and "counterexamples" not in page
    page = write_html([runs[False]], tmp_path / "invalid.html", timeline=tmp_path / "timeline.html").read_text()
    assert "job timelines of the counterexamples:" in page
