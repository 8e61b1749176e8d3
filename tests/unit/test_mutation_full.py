"""The full cross matrix: every scenario against every mutant, catches by invariant vs by assert."""
from __future__ import annotations

import json
from pathlib import Path

from harness.config import find_pyproject, resolve
from harness.mutation import MutationMatrix, Outcome
from harness.mutation_baseline import baseline_shards, keep_durations, read_durations
from harness.mutation_full import FullResult, full_to_json, render_full, run_full

ROOT = Path(__file__).resolve().parents[2]


def outcome(mutant, failed=(), violated=None) -> Outcome:
    return Outcome(mutant, ["scenarios"], 1 if failed or violated else 0, violated=dict(violated or {}),
                   failed=list(failed))


def test_a_failure_with_an_invariant_invalid_is_a_catch_by_invariant():
    r = FullResult("m", "", outcome("m", failed=["s.py::a", "s.py::b"],
                                    violated={"s.py::a": ["every_job_terminal"], "s.py::c": []}))
    assert r.failures == {"s.py::a": ["every_job_terminal"], "s.py::b": []}
    assert r.caught and r.caught_by_invariant and r.invariants == ["every_job_terminal"]


def test_only_a_scenarios_own_assert_is_not_a_catch_by_invariant():
    r = FullResult("m", "", outcome("m", failed=["s.py::b"]))
    assert r.caught and not r.caught_by_invariant


def test_results_about_the_run_itself_are_not_catches_by_invariant():
    r = FullResult("m", "", outcome("m", failed=["s.py::a"], violated={"s.py::a": ["faults_landed"]}))
    assert r.failures == {"s.py::a": []} and not r.caught_by_invariant


def test_summary_counts_catches_by_invariant():
    results = [FullResult("a", "", outcome("a", failed=["s::x"], violated={"s::x": ["no_double_billing"]})),
               FullResult("b", "", outcome("b", failed=["s::y"])),
               FullResult("c", "", outcome("c"))]
    lines = render_full(outcome(None), results, wall=12.0)
    assert lines[-1] == "mutation score: 2/3 caught, 1/3 caught by invariants  in 12s"
    assert any(line.startswith("b ") and "ASSERT" in line and "y by assert only" in line for line in lines)
    assert any(line.startswith("c ") and "SURVIVED" in line for line in lines)
    data = full_to_json(outcome(None), results, 12.0)
    assert data["matrix"] == {"a": {"s::x": ["no_double_billing"]}, "b": {"s::y": []}, "c": {}}
    assert data["score"] == {"caught": 2, "caught_by_invariants": 1, "total": 3}


def test_an_app_that_records_no_reach_runs_every_mutant_against_the_whole_suite(monkeypatch, tmp_path):
    m = MutationMatrix(resolve(environ={}, pyproject=find_pyproject(ROOT)), root=ROOT, out=tmp_path)
    m.mutants = {"acks-early": "x", "no-sweeper": "y"}
    ran = []
    monkeypatch.setattr(m, "catches", lambda: {"s.py::a": [("acks-early", "every_job_terminal")]})
    monkeypatch.setattr(m, "run_one", lambda mutant, nodeids, env=None: ran.append((mutant, nodeids)) or outcome(mutant))
    baseline, results = run_full(m)
    assert sorted((mutant or "", nodeids) for mutant, nodeids in ran) == [
        ("", [m.scenarios]), ("acks-early", [m.scenarios]), ("no-sweeper", [m.scenarios])]
    assert [r.name for r in results] == ["acks-early", "no-sweeper"]
    assert results[0].declared == [("s.py::a", "every_job_terminal")] and results[1].declared == []


def test_a_declared_catch_holds_when_its_scenario_fails_with_its_invariant():
    caught = FullResult("m", "", outcome("m", violated={"s::a": ["every_job_terminal"]}),
                        [("s::a", "every_job_terminal")])
    other = FullResult("n", "", outcome("n", violated={"s::a": ["no_double_billing"]}),
                       [("s::a", "every_job_terminal")])
    assert caught.declared_caught and not other.declared_caught
    lines = render_full(outcome(None), [caught, other])
    assert "declared catches: 1/2 mutants caught by the scenario and invariant written for them (not: n)" in lines


def test_a_scenario_failing_without_the_mutant_too_is_no_catch():
    baseline = outcome(None, failed=["s::flaky"], violated={"s::flaky": []})
    same = FullResult("m", "", outcome("m", failed=["s::flaky"]), baseline=baseline)
    more = FullResult("n", "", outcome("n", failed=["s::flaky"], violated={"s::flaky": ["every_job_terminal"]}),
                      baseline=baseline)
    assert same.failures == {} and not same.caught
    assert more.failures == {"s::flaky": ["every_job_terminal"]} and more.caught_by_invariant


def reach_a_only(ran: list):
    """A fake ``run_one``: its baseline records s.py::a reaching acks-early in its call, s.py::b nothing."""

    def run_one(mutant, nodeids, env=None, label=None):
        if env:
            folder = Path(env["JOBQUAKE_MUTANT_REACH"])
            (folder / "windows.jsonl").write_text('{"nodeid": "s.py::a", "setup": 100, "call": 101, "end": 110}\n'
                                                  '{"nodeid": "s.py::b", "setup": 110, "call": 111, "end": 120}\n')
            (folder / "9.reach").write_text("9 50 @start\n9 105 acks-early\n")
        ran.append((mutant, nodeids))
        return outcome(mutant)

    return run_one


def test_each_mutant_runs_only_with_the_scenarios_that_reach_it(monkeypatch, tmp_path):
    m = MutationMatrix(resolve(environ={}, pyproject=find_pyproject(ROOT)), root=ROOT, out=tmp_path)
    m.mutants = {"acks-early": "x", "no-sweeper": "y", "sweep-no-isolation": "z"}
    ran = []
    monkeypatch.setattr(m, "catches", lambda: {"s.py::a": [], "s.py::b": []})
    monkeypatch.setattr(m, "run_one", reach_a_only(ran))
    baseline, results = run_full(m)
    assert sorted((mutant or "", nodeids) for mutant, nodeids in ran) == [("", [m.scenarios]), ("acks-early", ["s.py::a"])]
    assert [r.not_reached for r in results] == [["s.py::b"], ["s.py::a", "s.py::b"], ["s.py::a", "s.py::b"]]
    lines = render_full(baseline, results, wall=5.0)
    assert any(line.startswith("no-sweeper") and "not reached" in line for line in lines)
    assert "pairs: 1 run, 5 not reached" in "\n".join(lines)
    assert full_to_json(baseline, results, 5.0)["pairs"] == {"not_reached": 5, "run": 1}


def test_a_scenario_written_for_a_mutant_runs_with_it_though_the_baseline_never_reached_it(monkeypatch, tmp_path):
    """Timing decides some paths: a baseline whose heartbeat never met the database restart reaches
    nothing of heartbeat-dies-on-db-error, yet the scenario declaring it must still run with it."""
    m = MutationMatrix(resolve(environ={}, pyproject=find_pyproject(ROOT)), root=ROOT, out=tmp_path)
    m.mutants = {"acks-early": "x", "heartbeat-dies-on-db-error": "y"}
    ran = []
    monkeypatch.setattr(m, "catches", lambda: {"s.py::a": [],
                                               "s.py::b": [("heartbeat-dies-on-db-error", "no_live_attempt_taken")]})
    monkeypatch.setattr(m, "run_one", reach_a_only(ran))
    baseline, results = run_full(m)
    assert sorted((mutant or "", nodeids) for mutant, nodeids in ran) == [
        ("", [m.scenarios]), ("acks-early", ["s.py::a"]), ("heartbeat-dies-on-db-error", ["s.py::b"])]
    assert [r.not_reached for r in results] == [["s.py::b"], ["s.py::a"]]


def both_asked_in_process(ran: list, seconds: float):
    """A fake ``run_one``: in its baseline s.py::a and s.py::b take ``seconds`` each and the pytest process
    itself (pid 9) asks acks-early's switch before them (so acks-early shares no session); with the
    mutant, s.py::b fails by an invariant."""

    def run_one(mutant, nodeids, env=None, label=None):
        if env:
            folder = Path(env["JOBQUAKE_MUTANT_REACH"])
            windows = [{"nodeid": n, "setup": 100 + i * seconds, "call": 101 + i * seconds,
                        "end": 100 + (i + 1) * seconds, "pid": 9} for i, n in enumerate(["s.py::a", "s.py::b"])]
            (folder / "windows.jsonl").write_text("".join(json.dumps(w) + "\n" for w in windows))
            (folder / "9.reach").write_text("9 50 @start\n9 60 acks-early\n")
        ran.append((mutant, nodeids, label))
        failed = ["s.py::b"] if mutant and "s.py::b" in nodeids else []
        return Outcome(mutant, nodeids, int(bool(failed)), violated={n: ["every_job_terminal"] for n in failed},
                       failed=failed, seconds=seconds)

    return run_one


def one_slot_acks_early(monkeypatch, tmp_path, run_one) -> MutationMatrix:
    m = MutationMatrix(resolve(environ={}, pyproject=find_pyproject(ROOT)), root=ROOT, out=tmp_path, jobs=1)
    m.mutants = {"acks-early": "x"}
    monkeypatch.setattr(m, "catches", lambda: {"s.py::a": [], "s.py::b": []})
    monkeypatch.setattr(m, "run_one", run_one)
    return m


def test_a_mutant_costlier_than_its_share_of_a_slot_runs_in_parts_and_its_row_joins_them(monkeypatch, tmp_path):
    """One slot, two scenarios of 100 s: a part is at most a quarter of the 200 s (and at least a minute), so
    acks-early runs in two sessions of its own, and its row has both scenarios."""
    ran = []
    baseline, (result,) = run_full(one_slot_acks_early(monkeypatch, tmp_path, both_asked_in_process(ran, 100.0)))
    assert sorted(r for r in ran if r[0]) == [("acks-early", ["s.py::a"], "acks-early-part-1"),
                                              ("acks-early", ["s.py::b"], "acks-early-part-2")]
    assert sorted(result.outcome.nodeids) == ["s.py::a", "s.py::b"] and result.outcome.seconds == 200.0
    assert result.failures == {"s.py::b": ["every_job_terminal"]} and result.not_reached == []


def test_a_small_matrix_keeps_each_mutant_whole(monkeypatch, tmp_path):
    """The same at 10 s a scenario: a part would be worth less than a minute, so acks-early runs whole."""
    ran = []
    run_full(one_slot_acks_early(monkeypatch, tmp_path, both_asked_in_process(ran, 10.0)))
    assert [r for r in ran if r[0]] == [("acks-early", ["s.py::a", "s.py::b"], None)]


def test_baseline_shards_keep_files_whole_balance_tests_and_keep_suite_order():
    nodeids = ["a.py::1", "a.py::2", "a.py::3", "b.py::1", "c.py::1", "c.py::2", "d.py::1"]
    assert baseline_shards(nodeids, 3) == [["a.py::1", "a.py::2", "a.py::3"], ["c.py::1", "c.py::2"],
                                           ["b.py::1", "d.py::1"]]
    assert baseline_shards(["a.py::1", "a.py::2"], 4) == [["a.py::1", "a.py::2"]]  # never an empty shard


def test_baseline_shards_balance_what_the_last_baseline_took_not_test_counts():
    """One long file against three short ones: by counts the long file's shard would end last by far."""
    nodeids = ["long.py::1", "long.py::2", "a.py::1", "a.py::2", "b.py::1", "b.py::2", "c.py::1"]
    took = {"long.py::1": 30.0, "long.py::2": 30.0, "a.py::1": 5.0, "a.py::2": 5.0, "b.py::1": 5.0,
            "b.py::2": 5.0}  # c.py::1 is new: it costs the median (5 s)
    assert baseline_shards(nodeids, 2, took) == [["long.py::1", "long.py::2"],
                                                 ["a.py::1", "a.py::2", "b.py::1", "b.py::2", "c.py::1"]]
    # by counts (no record) the long file shares its shard: 70 s against 15
    assert baseline_shards(nodeids, 2) == [["long.py::1", "long.py::2", "a.py::1", "a.py::2"],
                                           ["b.py::1", "b.py::2", "c.py::1"]]


def test_a_baseline_keeps_each_scenarios_last_duration_and_a_bad_record_is_no_record(tmp_path):
    path = tmp_path / "durations.json"
    assert read_durations(path) == {}
    keep_durations(path, {"a.py::1": 2.345, "b.py::1": 7.0})
    keep_durations(path, {"a.py::1": 3.0})  # b.py::1 not run this time: its last figure stays
    assert read_durations(path) == {"a.py::1": 3.0, "b.py::1": 7.0}
    path.write_text("[1, 2]")
    assert read_durations(path) == {}


def test_a_sharded_baseline_records_reach_per_shard_and_joins_what_they_found(monkeypatch, tmp_path):
    """Two files, two shards: each shard's session serves only its own tests, so a reach in one shard's
    process is never laid on the other shard's tests, and the baseline's results are merged."""
    m = MutationMatrix(resolve(environ={}, pyproject=find_pyproject(ROOT)), root=ROOT, out=tmp_path, jobs=2)
    m.mutants = {"acks-early": "x", "no-sweeper": "y"}
    ran = []

    def run_one(mutant, nodeids, env=None, label=None):
        ran.append((mutant, nodeids, label))
        if mutant is None:  # each shard's session: its test at the same times, its own process reaching
            folder = Path(env["JOBQUAKE_MUTANT_REACH"])
            test = nodeids[0]
            (folder / "windows.jsonl").write_text(
                '{"nodeid": "%s", "setup": 100, "call": 101, "end": 110}\n' % test)
            name = "acks-early" if test.startswith("s.py") else "no-sweeper"
            (folder / "9.reach").write_text(f"9 50 @start\n9 105 {name}\n")
            failed = ["t.py::b"] if test.startswith("t.py") else []
            return Outcome(None, nodeids, 1 if failed else 0, failed=failed)
        return outcome(mutant)

    monkeypatch.setattr(m, "catches", lambda: {"s.py::a": [], "t.py::b": []})
    monkeypatch.setattr(m, "run_one", run_one)
    baseline, results = run_full(m)
    shards = sorted((nodeids, label) for mutant, nodeids, label in ran if mutant is None)
    assert shards == [(["s.py::a"], "none-1of2"), (["t.py::b"], "none-2of2")] or \
        shards == [(["s.py::a"], "none-2of2"), (["t.py::b"], "none-1of2")]
    assert sorted((mutant, nodeids) for mutant, nodeids, _ in ran if mutant) == [
        ("acks-early", ["s.py::a"]), ("no-sweeper", ["t.py::b"])]
    assert sorted(baseline.nodeids) == ["s.py::a", "t.py::b"]
    assert baseline.failed == ["t.py::b"] and baseline.exit_code == 1


def test_a_stop_during_the_runs_is_passed_on_to_the_sessions_in_progress(monkeypatch, tmp_path):
    """The baseline's shards, ``jobquake mutants`` and ``--full`` all run their sessions through ``in_parallel``."""
    m = MutationMatrix(resolve(environ={}, pyproject=find_pyproject(ROOT)), root=ROOT, out=tmp_path, jobs=1)
    started, stopped = [], []
    monkeypatch.setattr(m, "stop_children", lambda: stopped.append(True))

    def run(item):
        started.append(item)
        if item == "first":
            raise KeyboardInterrupt
        return outcome(item)

    try:
        m.in_parallel(run, ["first", "second"])
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the stop was swallowed")
    # (whether "second" began is the pool's race: its thread may take it before the stop cancels it)
    assert started[0] == "first" and stopped == [True]
    assert [o.mutant for o in m.in_parallel(lambda item: outcome(item), ["a", "b", "c"], jobs=3)] == ["a", "b", "c"]


def test_a_failing_run_with_no_mutant_is_named_last_scenario_by_scenario():
    """A CI log shows its tail: the scenarios the app fails with no mutant, and why, end the rendering."""
    baseline = outcome(None, failed=["s.py::a", "s.py::b"], violated={"s.py::a": ["every_job_terminal"]})
    results = [FullResult("m", "", outcome("m", failed=["s.py::a"], violated={"s.py::a": ["no_double_billing"]}))]
    tail = render_full(baseline, results)[-3:]
    assert tail == ["no mutant: FAILURES (exit 1): the app fails these without any mutant",
                    "  s.py::a: invalid every_job_terminal", "  s.py::b: its own assertion or an error"]
    assert not any("FAILURES" in line for line in render_full(outcome(None), results))
