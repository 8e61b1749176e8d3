"""Mutant reach: the attribution of reach lines to scenarios, on synthetic reach files and windows."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from harness.mutation_reach import (BUCKET_S, STARTUP_S, WINDOWS_FILE, Process, Window, attribute,
                                    read_processes, scenarios_reaching)

# three tests, 100 s apart: setup 10 s, call 20 s (teardown included)
T0 = 1_000_000.0
WINDOWS = [Window(name, T0 + i * 100, T0 + i * 100 + 10, T0 + i * 100 + 30) for i, name in enumerate("abc")]
LONG_LIVED = T0 - 60  # a process of the stack, started long before these reaches


def reached(*processes: Process) -> dict[str, set[str]]:
    return attribute(processes, WINDOWS)


def test_a_reach_during_a_tests_call_counts_for_that_test_only():
    found = reached(Process(1, LONG_LIVED, [(T0 + 115, "sweep-no-isolation")]))
    assert found == {"a": set(), "b": {"sweep-no-isolation"}, "c": set()}


def test_a_line_within_the_bucket_of_a_call_counts_for_it():
    found = reached(Process(1, LONG_LIVED, [(T0 + 110 - BUCKET_S / 2, "no-deadline")]))
    assert found["b"] == {"no-deadline"}


def test_a_line_dated_after_a_tests_end_is_not_that_tests():
    # back-to-back tests: a line dates the first reach of its bucket, never an earlier one
    windows = [Window("x", T0, T0 + 1, T0 + 5), Window("y", T0 + 5, T0 + 5.3, T0 + 9)]
    found = attribute([Process(1, LONG_LIVED, [(T0 + 5.7, "sweep-no-isolation")])], windows)
    assert found == {"x": set(), "y": {"sweep-no-isolation"}}


def test_a_reach_at_a_process_start_counts_for_every_later_test():
    # read once at start (a configuration), inside a's call: it shapes b and c too, not what ended before
    found = reached(Process(1, T0 + 112, [(T0 + 112 + STARTUP_S / 2, "acks-early")]))
    assert found == {"a": set(), "b": {"acks-early"}, "c": {"acks-early"}}


def test_a_reach_between_tests_or_during_a_setup_counts_for_every_later_test():
    found = reached(Process(1, LONG_LIVED, [(T0 + 60, "no-sweeper"), (T0 + 205, "cli-budget-wins")]))
    assert found == {"a": set(), "b": {"no-sweeper"}, "c": {"no-sweeper", "cli-budget-wins"}}


def test_a_restarted_worker_start_up_counts_from_its_restart_and_its_work_per_test():
    first = Process(10, T0 - 5, [(T0 - 3, "acks-early"), (T0 + 15, "swallow-soft-limit")])  # killed in a
    restarted = Process(11, T0 + 20, [(T0 + 22, "acks-early"), (T0 + 215, "swallow-soft-limit")])
    found = reached(first, restarted)
    assert found == {"a": {"acks-early", "swallow-soft-limit"}, "b": {"acks-early"},
                     "c": {"acks-early", "swallow-soft-limit"}}


def test_a_process_started_in_a_setup_is_ready_when_the_call_begins():
    api = Process(1, T0 + 102, [(T0 + 111, "unstable-job-id")])  # started by b's reset, serving b's call
    assert reached(api) == {"a": set(), "b": {"unstable-job-id"}, "c": set()}


def test_a_forked_pool_process_reads_nothing_at_start_of_its_own():
    child = Process(2, T0 + 112, [(T0 + 113, "swallow-soft-limit")], forked=True)  # forked while b ran
    assert reached(child) == {"a": set(), "b": {"swallow-soft-limit"}, "c": set()}


def test_without_a_start_line_a_process_starts_at_its_first_line():
    found = reached(Process(1, None, [(T0 + 112, "acks-early"), (T0 + 215, "no-deadline")]))
    assert found == {"a": set(), "b": {"acks-early"}, "c": {"acks-early", "no-deadline"}}


def write_run(folder: Path, lines: list[str], windows: list[Window]) -> Path:
    (folder / "77.reach").write_text("".join(line + "\n" for line in lines))
    (folder / WINDOWS_FILE).write_text("".join(json.dumps(w.__dict__) + "\n" for w in windows))
    return folder


def test_selection_reads_the_files_and_a_test_with_no_window_reaches_everything(tmp_path):
    write_run(tmp_path, [f"77 {LONG_LIVED} @start", f"77 {T0 + 15} no-deadline", "77 cut"], WINDOWS[:2])
    assert read_processes(tmp_path)[77].reaches == [(T0 + 15, "no-deadline")]
    found = scenarios_reaching(tmp_path, ["a", "b", "c"], ["no-deadline", "acks-early"])
    assert found == {"no-deadline": ["a", "c"], "acks-early": ["c"]}  # c never ran in the baseline


def test_an_app_that_records_no_reach_selects_nothing_to_skip(tmp_path):
    write_run(tmp_path, [], WINDOWS)
    assert scenarios_reaching(tmp_path, ["a"], ["no-deadline"]) is None


def test_refapps_switch_writes_a_line_per_bucket_near_each_reach_and_one_file_per_forked_child(tmp_path):
    code = ("import os, time\nfrom refapp.mutants import mutant\n"
            "for _ in range(1000): mutant('no-deadline')\n"
            "if os.fork() == 0:\n    mutant('acks-early'); os._exit(0)\nos.wait()\n")
    before = time.time()
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "JOBQUAKE_MUTANT_REACH": str(tmp_path)})
    processes = read_processes(tmp_path)
    assert len(processes) == 2
    parent, child = sorted(processes.values(), key=lambda p: p.pid)
    assert [name for _, name in parent.reaches] in (["no-deadline"], ["no-deadline", "no-deadline"])  # a bucket edge
    assert child.reaches[0][1] == "acks-early" and child.forked and not parent.forked
    assert all(before - BUCKET_S <= t <= time.time() for t, _ in parent.reaches + child.reaches)


def test_what_an_earlier_baseline_reached_still_counts(tmp_path):
    history = tmp_path / "history.json"
    tmp_path = tmp_path / "reach"
    tmp_path.mkdir()
    history.write_text(json.dumps({"b": ["sweep-no-isolation"]}))  # a row failed under load, that time
    write_run(tmp_path, [f"77 {LONG_LIVED} @start", f"77 {T0 + 15} no-deadline"], WINDOWS[:2])
    found = scenarios_reaching(tmp_path, ["a", "b"], ["no-deadline", "sweep-no-isolation"], history)
    assert found == {"no-deadline": ["a"], "sweep-no-isolation": ["b"]}
    assert json.loads(history.read_text()) == {"a": ["no-deadline"], "b": ["sweep-no-isolation"]}


def test_a_forked_pool_process_reaching_at_its_fork_is_doing_work_not_starting_up():
    """A pool child writes no start line: its first reach may share its fork's instant, and is still
    the task it runs, not configuration it keeps for later tests."""
    child = Process(2, None, [(T0 + 112, "claim-steals-live-job")], forked=True)
    assert reached(child) == {"a": set(), "b": {"claim-steals-live-job"}, "c": set()}
