"""Which mutants of the full matrix share a session, and what each mutant's share of it says."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from harness.config import find_pyproject, resolve
from harness.mutation import MutantResult, MutationMatrix, Outcome, joined, render
from harness.mutation_full import run_full
from harness.mutation_plan import (SESSION_S, Session, app_modules_preloaded, mutant_of, pack, run_session, run_shared,
                                   split, split_into_parts)
from harness.mutation_reach import asked_by_the_session
from harness.mutation_session import Plan

ROOT = Path(__file__).resolve().parents[2]
COSTS = {"big": 100.0, "mid": 40.0, "small1": 5.0, "small2": 4.0, "small3": 3.0, "inproc": 10.0}


def names(sessions: list[Session]) -> list[list[str]]:
    return [s.mutants for s in sessions]


def test_mutants_that_may_share_fill_one_session_per_slot_and_the_others_run_alone():
    selected = {name: [f"s.py::{name}"] for name in COSTS} | {"unreached": []}
    sessions = pack(selected, COSTS.__getitem__, set(COSTS) - {"inproc"}, slots=2)
    assert names(sessions) == [["big"], ["mid", "small1", "small2", "small3"], ["inproc"]]
    assert [s.shared for s in sessions] == [True, True, False]
    assert sessions[0].seconds == SESSION_S + 100  # longest first: the pool starts it first


def test_with_nothing_shareable_every_mutant_has_a_session_of_its_own():
    selected = {name: [f"s.py::{name}"] for name in COSTS}
    sessions = pack(selected, COSTS.__getitem__, set(), slots=2)
    assert sorted(map(tuple, names(sessions))) == sorted((name,) for name in COSTS)
    assert not any(s.shared for s in sessions)


def test_one_slot_puts_every_shareable_mutant_in_one_session_costliest_first():
    selected = {name: [f"s.py::{name}"] for name in ("small1", "big", "mid")}
    assert names(pack(selected, COSTS.__getitem__, selected, slots=1)) == [["big", "mid", "small1"]]


def test_a_mutant_is_cut_into_parts_of_about_equal_seconds_in_its_order_and_a_short_one_stays_whole():
    took = {"a.py::1": 30.0, "a.py::2": 10.0, "b.py::1": 10.0, "b.py::2": 10.0, "c.py::1": 20.0, "d.py::1": 5.0}
    selected = {"big": list(took), "small": ["d.py::1"], "none": []}
    parts = split_into_parts(selected, took, limit=30.0)  # big: 85 s, so 3 parts of about 28
    assert parts == {"big#1": ["a.py::1"], "big#2": ["a.py::2", "b.py::1", "b.py::2"], "big#3": ["c.py::1", "d.py::1"],
                     "small": ["d.py::1"], "none": []}
    assert {mutant_of(key) for key in parts} == {"big", "small", "none"}
    assert split_into_parts({"m": ["x", "y"]}, {"x": 50.0, "y": 50.0}, limit=10.0) == {"m#1": ["x"], "m#2": ["y"]}


def test_the_parts_of_a_mutant_join_into_one_outcome():
    one = Outcome("m", ["s.py::a"], 0, seconds=3.0)
    two = Outcome("m", ["s.py::b", "s.py::c"], 1, violated={"s.py::c": ["every_job_terminal"]}, failed=["s.py::c"],
                  seconds=4.0, not_run=["s.py::b"])
    assert joined([one, two]) == Outcome("m", ["s.py::a", "s.py::b", "s.py::c"], 1, {"s.py::c": ["every_job_terminal"]},
                                         ["s.py::c"], 7.0, ["s.py::b"])


def test_two_parts_of_one_mutant_in_a_shared_session_run_as_one_group(monkeypatch, tmp_path):
    m = three_mutants(tmp_path)
    plans = []

    def run_one(mutant, nodeids, env=None, label=None, args=()):
        plans.append(json.loads(Path(args[-1].split("=", 1)[1]).read_text())["groups"])
        return Outcome(mutant, nodeids, 0)

    monkeypatch.setattr(m, "run_one", run_one)
    run_session(m, Session(["acks-early#1", "no-sweeper", "acks-early#2"], shared=True),
                {"acks-early#1": ["s.py::a"], "acks-early#2": ["s.py::b"], "no-sweeper": ["s.py::a"]}, "shared-1")
    assert plans == [[{"mutant": "acks-early", "nodeids": ["s.py::a", "s.py::b"]},
                      {"mutant": "no-sweeper", "nodeids": ["s.py::a"]}]]


def plan_of(tmp_path: Path) -> Plan:
    return Plan("APP_MUTANT", [("a", ["s.py::x", "s.py::y[1]"]), ("b", ["s.py::x"])], tmp_path / "plan.json")


def test_a_shared_sessions_outcome_is_split_into_each_mutants_own(tmp_path):
    plan = plan_of(tmp_path)
    rows = [{"mutant": "a", "nodeid": "s.py::x", "test": "s.py::x[a]", "outcome": "passed", "seconds": 1.5},
            {"mutant": "a", "nodeid": "s.py::y[1]", "test": "s.py::y[1-a]", "outcome": "failed", "seconds": 2.0},
            {"mutant": "b", "nodeid": "s.py::x", "test": "s.py::x[b]", "outcome": "failed", "seconds": 3.0}]
    whole = Outcome("a", ["s.py::x", "s.py::y"], 1, violated={"s.py::x[a]": [], "s.py::y[1-a]": ["sweep_complete"],
                                                               "s.py::x[b]": ["every_job_terminal"]})
    found = split_rows(whole, plan, rows)
    assert found["a"].failed == ["s.py::y[1]"] and found["a"].exit_code == 1 and found["a"].seconds == 3.5
    assert found["a"].violated == {"s.py::x": [], "s.py::y[1]": ["sweep_complete"]}
    assert found["b"].failed == ["s.py::x"] and found["b"].violated == {"s.py::x": ["every_job_terminal"]}


def test_a_pair_the_session_never_ran_counts_as_failed_never_as_passed(tmp_path):
    plan = plan_of(tmp_path)
    rows = [{"mutant": "a", "nodeid": "s.py::x", "test": "s.py::x[a]", "outcome": "passed", "seconds": 1.0}]
    found = split_rows(Outcome("a", [], 3), plan, rows)  # 3: pytest's internal error
    assert found["a"].failed == ["s.py::y[1]"] and found["b"].failed == ["s.py::x"]
    assert found["a"].exit_code == found["b"].exit_code == 3


def split_rows(whole: Outcome, plan: Plan, rows: list[dict]) -> dict[str, Outcome]:
    """``split`` over the outcomes file a session with these rows wrote."""
    plan.outcomes_path.write_text(json.dumps(rows))
    return split(whole, plan)


def test_the_zygote_preloading_the_apps_own_module_is_told_from_a_library(tmp_path):
    (tmp_path / "myapp").mkdir()
    (tmp_path / "src" / "other").mkdir(parents=True)
    (tmp_path / "single.py").write_text("")
    found = app_modules_preloaded(["openai", "myapp.tasks", "other", "single", "celery"], tmp_path)
    assert found == ["myapp.tasks", "other", "single"]


def reach_folder(tmp_path: Path, windows: list[dict], lines: dict[int, str]) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "windows.jsonl").write_text("".join(json.dumps(w) + "\n" for w in windows))
    for pid, text in lines.items():
        (tmp_path / f"{pid}.reach").write_text(text)
    return tmp_path


def test_the_mutants_the_baselines_own_pytest_process_asked_for_are_named(tmp_path):
    window = {"nodeid": "s.py::a", "setup": 100, "call": 101, "end": 110, "pid": 7}
    folder = reach_folder(tmp_path / "one", [window], {7: "7 90 @start\n7 102 unstable-job-id\n",
                                                       8: "8 95 @start\n8 103 acks-early\n"})
    assert asked_by_the_session([folder]) == {"unstable-job-id"}
    old = reach_folder(tmp_path / "old", [{k: v for k, v in window.items() if k != "pid"}], {})
    assert asked_by_the_session([folder, old]) is None  # windows that do not say: nothing may share


def fake_sessions(ran: list):
    """A ``run_one`` whose baseline reaches every switch from both tests, one of them in the pytest process
    itself, and whose planned session fails no-sweeper's pairs."""

    def run_one(mutant, nodeids, env=None, label=None, args=()):
        ran.append((mutant, nodeids, label, list(args)))
        if mutant is None and not (env or {}).get("JOBQUAKE_MUTANT_REACH"):
            return Outcome(None, nodeids, 0)
        if mutant is None:  # the baseline: both tests reach every switch; the pytest process asks one itself
            folder = Path(env["JOBQUAKE_MUTANT_REACH"])
            reach_folder(folder, [{"nodeid": n, "setup": 100 + i * 20, "call": 101 + i * 20, "end": 110 + i * 20,
                                   "pid": 7} for i, n in enumerate(nodeids)],
                         {7: "7 90 @start\n7 102 unstable-job-id\n",
                          8: "8 95 @start\n8 96 acks-early\n8 96 no-sweeper\n8 96 unstable-job-id\n"})
            return Outcome(None, nodeids, 0)
        if not args:
            return Outcome(mutant, nodeids, 0)
        plan = Plan.load(Path(args[-1].split("=", 1)[1]))
        rows = [{"mutant": mm, "nodeid": n, "test": f"{n}[{mm}]", "seconds": 1.0,
                 "outcome": "failed" if mm == "no-sweeper" else "passed"} for mm, n in plan.pairs()]
        plan.outcomes_path.write_text(json.dumps(rows))
        return Outcome(mutant, nodeids, 1, violated={"s.py::a[no-sweeper]": ["every_job_terminal"]})

    return run_one


def three_mutants(tmp_path: Path) -> MutationMatrix:
    m = MutationMatrix(resolve(environ={}, pyproject=find_pyproject(ROOT)), root=ROOT, out=tmp_path, jobs=1)
    m.mutants = {"acks-early": "x", "no-sweeper": "y", "unstable-job-id": "z"}
    return m


def test_the_full_matrix_runs_shareable_mutants_in_one_planned_session(monkeypatch, tmp_path):
    m = three_mutants(tmp_path)
    ran = []
    monkeypatch.setattr(m, "catches", lambda: {"s.py::a": [], "s.py::b": []})
    monkeypatch.setattr(m, "run_one", fake_sessions(ran))
    baseline, results = run_full(m)
    sessions = [(mutant, nodeids, args) for mutant, nodeids, _, args in ran if mutant]
    shared = [s for s in sessions if s[2]]
    assert len(shared) == 1 and shared[0][1] == ["s.py::a", "s.py::b"]
    assert shared[0][2][:2] == ["-p", "harness.mutation_session"]
    assert ("unstable-job-id", ["s.py::a", "s.py::b"], []) in sessions  # asked in-process: a session of its own
    by_name = {r.name: r for r in results}
    assert by_name["no-sweeper"].failures == {"s.py::a": ["every_job_terminal"], "s.py::b": []}
    assert not by_name["acks-early"].caught
    plan = json.loads((tmp_path / "sessions.json").read_text())
    assert sorted(tuple(s["mutants"]) for s in plan) == [("acks-early", "no-sweeper"), ("unstable-job-id",)]


def test_declared_catches_share_a_session_too_after_a_baseline_that_records_reach(monkeypatch, tmp_path):
    m = three_mutants(tmp_path)
    ran = []
    monkeypatch.setattr(m, "catches", lambda: {"s.py::a": [("no-sweeper", "every_job_terminal"),
                                                           ("unstable-job-id", None)],
                                               "s.py::b": [("acks-early", "every_job_terminal")]})
    monkeypatch.setattr(m, "run_one", fake_sessions(ran))
    baseline, results = m.run(run_shared)
    assert ran[0][0] is None  # the baseline first: what it reached says who may share
    shared = [(mutant, nodeids) for mutant, nodeids, _, args in ran if args]
    assert shared == [("acks-early", ["s.py::a", "s.py::b"])]  # acks-early's and no-sweeper's, in turn
    assert ("unstable-job-id", ["s.py::a"], None, []) in ran  # asked in-process: alone
    by_name = {r.name: r for r in results}
    assert by_name["no-sweeper"].caught and not by_name["acks-early"].caught


def test_session_per_mutant_keeps_every_mutant_apart(monkeypatch, tmp_path):
    m = three_mutants(tmp_path)
    ran = []
    monkeypatch.setattr(m, "catches", lambda: {"s.py::a": [("no-sweeper", "every_job_terminal")],
                                               "s.py::b": [("acks-early", "every_job_terminal")]})
    monkeypatch.setattr(m, "run_one", fake_sessions(ran))
    m.run()  # the default runner: a session per mutant, all at once with the baseline
    assert sorted((mutant or "", nodeids) for mutant, nodeids, _, _ in ran) == [
        ("", [m.scenarios]), ("acks-early", ["s.py::b"]), ("no-sweeper", ["s.py::a"])]


def test_a_pair_left_out_after_its_mutants_first_catch_is_not_run_neither_failed_nor_passed(tmp_path):
    plan = plan_of(tmp_path)
    rows = [{"mutant": "a", "nodeid": "s.py::x", "test": "s.py::x[a]", "outcome": "failed", "seconds": 2.0},
            {"mutant": "a", "nodeid": "s.py::y[1]", "test": "s.py::y[1-a]", "outcome": "not run", "seconds": 0.0},
            {"mutant": "b", "nodeid": "s.py::x", "test": "s.py::x[b]", "outcome": "passed", "seconds": 1.0}]
    found = split_rows(Outcome("a", [], 1, violated={"s.py::x[a]": ["sweep_complete"], "s.py::x[b]": []}), plan, rows)
    assert found["a"].failed == ["s.py::x"] and found["a"].not_run == ["s.py::y[1]"]
    assert found["a"].violated == {"s.py::x": ["sweep_complete"]}
    assert found["b"].failed == [] and found["b"].not_run == [] and found["b"].exit_code == 0


def test_a_first_catch_is_an_app_invariant_invalid_where_the_baseline_had_it_valid():
    from harness.mutation_session import FirstCatch

    rule = FirstCatch({"s.py::flaky": ["every_job_terminal"]}, ["faults_landed"])
    assert rule.caught("s.py::x", {"sweep_complete"})
    assert not rule.caught("s.py::x", {"faults_landed"})  # the run could not be judged: no catch
    assert not rule.caught("s.py::x", set())  # the scenario's own assert only: no catch by invariant
    assert not rule.caught("s.py::flaky", {"every_job_terminal"})  # invalid with no mutant too
    assert rule.caught("s.py::flaky", {"every_job_terminal", "no_double_billing"})


def test_first_catch_runs_the_scenarios_written_for_a_mutant_first_then_the_shortest():
    from harness.mutation_full import catch_order

    took = {"s.py::long": 30.0, "s.py::short": 2.0, "s.py::mid": 9.0}
    assert catch_order(["s.py::long", "s.py::mid", "s.py::short", "s.py::new"], ["s.py::long"], took) == [
        "s.py::long", "s.py::short", "s.py::mid", "s.py::new"]  # new: no baseline span, last


def test_first_catch_plans_every_mutant_and_reports_the_pairs_left_out(monkeypatch, tmp_path):
    """Even a mutant alone in its session runs as a plan (the plugin stops it), and the rows say which
    pairs were left out after the catch."""
    from harness.mutation_full import render_full

    m = three_mutants(tmp_path)
    ran = []
    monkeypatch.setattr(m, "catches", lambda: {"s.py::a": [("no-sweeper", "every_job_terminal")], "s.py::b": []})
    monkeypatch.setattr(m, "run_one", fake_sessions(ran))
    plans = []
    import harness.mutation_plan

    def split(whole, plan):
        plans.append(plan)
        return {mutant: Outcome(mutant, nodeids, 0, not_run=nodeids[1:] if mutant == "no-sweeper" else [])
                for mutant, nodeids in plan.groups}

    monkeypatch.setattr(harness.mutation_plan, "split", split)
    baseline, results = run_full(m, first_catch=True)
    assert all(args[:2] == ["-p", "harness.mutation_session"] for mutant, _, _, args in ran if mutant)
    assert all(plan.first_catch is not None for plan in plans)
    groups = {mutant: nodeids for plan in plans for mutant, nodeids in plan.groups}
    assert groups["no-sweeper"][0] == "s.py::a"  # written for it: first
    by_name = {r.name: r for r in results}
    assert by_name["no-sweeper"].pairs_run == 1
    text = "\n".join(render_full(baseline, results))
    assert "run to its first catch" in text and "first catch: 1 pairs not run" in text


def test_the_declared_matrix_ends_with_what_failed_with_no_mutant():
    baseline = Outcome(None, ["s.py::a", "s.py::b"], 1, {"s.py::b": ["no_job_stuck"]}, ["s.py::b"])
    caught = MutantResult("m", "", [("s.py::a", "every_job_terminal")],
                          Outcome("m", ["s.py::a"], 1, {"s.py::a": ["every_job_terminal"]}, ["s.py::a"]))
    lines = render(baseline, [caught], narrowed=True)
    assert "mutation score: 1/1 caught" in lines
    assert lines[-2:] == ["no mutant: FAILURES (exit 1): the app fails these without any mutant",
                          "  s.py::b: invalid no_job_stuck"]


def test_a_session_s_failures_are_kept_with_pytest_s_reason_for_each(monkeypatch, tmp_path):
    m = MutationMatrix(resolve(environ={}, pyproject=find_pyproject(ROOT)), root=ROOT, out=tmp_path)
    printed = ("..F.E\n"
               "FAILED scenarios/test_a.py::test_one - AssertionError: job 7 still 'queued'\n"
               "ERROR scenarios/test_b.py::test_two - jobquake.StartError: redis did not answer\n"
               "ERROR scenarios/test_b.py::test_three\n"
               "1 failed, 2 errors in 3.00s\n")
    monkeypatch.setattr(m, "_pytest", lambda args, env: subprocess.CompletedProcess(args, 1, printed, ""))
    outcome = m.run_one(None, ["scenarios"])
    assert outcome.failed == ["scenarios/test_a.py::test_one", "scenarios/test_b.py::test_three",
                              "scenarios/test_b.py::test_two"]
    assert outcome.why == {"scenarios/test_a.py::test_one": "AssertionError: job 7 still 'queued'",
                           "scenarios/test_b.py::test_two": "jobquake.StartError: redis did not answer",
                           "scenarios/test_b.py::test_three": ""}
    assert render(outcome, [MutantResult("m", "", [], None)])[-3:] == [
        "  scenarios/test_a.py::test_one: AssertionError: job 7 still 'queued'",
        "  scenarios/test_b.py::test_three: its own assertion or an error",
        "  scenarios/test_b.py::test_two: jobquake.StartError: redis did not answer"]
