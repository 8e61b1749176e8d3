"""What the full cross matrix costs and where it goes: wall, machine CPU, CPU per pair, restarts.

Runs ``jobquake mutants --full --jobs N`` with the machine's CPU read from
/proc/stat before and after (run it on a quiet machine: everything counts),
or reads a finished run's folder (``--from``, no CPU figure then). From each
scenario's history in the run's artifacts it counts the tests after which
isolation had to kill the app's processes: work was still pending after the
verdict (a mutant's stuck job), so whatever a process held in memory dies
with it and the next test's reset starts every process again. Then it
measures what one such restart costs: a stack of this project is started,
its app processes are killed the way isolation kills them and started again
by a reset, ``--restarts`` times, with the idle stack's own rate taken off.
``restarts x CPU per restart`` is the part of the matrix's CPU that goes to
starting the app again. Writes ``benchmarks/results/mutants_full_cost.json``.

    .venv/bin/python benchmarks/mutants_full.py [--jobs 4] [--restarts 5] [--from .jobquake/mutants]

``--compare-sessions N`` instead runs the matrix ``2 N`` times, alternating
one pytest session per mutant (``--session-per-mutant``) with mutants
sharing sessions where they may (the default), each from a fresh reach
history, and writes the medians, their ratio and the mutants whose verdict
differed to ``benchmarks/results/mutants_full_sessions.json``.

``--inert-session N`` instead runs, after a matrix (its reach history and
baseline folders), one shared session of the N mutants that reach the fewest
scenarios, each with every scenario it does not reach: the correct app's
code, several times in a row with the app's processes restarted between
groups. Every test must pass (``benchmarks/results/mutants_inert_session.json``).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from harness.config import find_pyproject, resolve
from harness.history import load
from harness.isolation import stop_holders
from harness.stack import reaper
from harness.stack.stack import Stack

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results" / "mutants_full_cost.json"
COMPARE = Path(__file__).parent / "results" / "mutants_full_sessions.json"
INERT = Path(__file__).parent / "results" / "mutants_inert_session.json"
TICKS = os.sysconf("SC_CLK_TCK")
IDLE_WINDOW_S = 5.0


def machine_cpu() -> float:
    """CPU seconds every core spent not idle since boot (/proc/stat: all but idle and iowait)."""
    values = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (sum(values) - values[3] - values[4]) / TICKS


def run_matrix(jobs: int, work: Path, extra: tuple[str, ...] = (), name: str = "mutants-full.json") -> dict:
    out = work.parent / name
    cpu, wall, load = machine_cpu(), time.monotonic(), os.getloadavg()[0]
    code = subprocess.call([sys.executable, "-m", "harness.cli", "mutants", "--full", "--jobs", str(jobs),
                            "--out", str(out), *extra], cwd=ROOT)
    return {"exit": code, "jobs": jobs, "wall_s": round(time.monotonic() - wall, 1),
            "machine_cpu_s": round(machine_cpu() - cpu, 1), "load_average_before": round(load, 2),
            "load_average_after": round(os.getloadavg()[0], 2), "matrix": str(out.relative_to(ROOT))}


def verdicts(matrix: Path) -> dict[str, list]:
    """{mutant: [caught by invariants, its invariants]} of a finished matrix."""
    data = json.loads(matrix.read_text())
    return {m["name"]: [m["caught_by_invariant"], m["invariants"]] for m in data["mutants"]}


def compare_sessions(jobs: int, work: Path, rounds: int) -> dict:
    """The matrix with one session per mutant against mutants sharing sessions, alternating, each from a
    fresh reach history; the mutants whose verdict differs between the two are named."""
    modes = {"session_per_mutant": ("--session-per-mutant",), "shared": ()}
    runs: dict[str, list] = {mode: [] for mode in modes}
    for _ in range(rounds):
        for mode, extra in modes.items():  # alternating: both see the same machine
            (work / "reach-history.json").unlink(missing_ok=True)
            run = run_matrix(jobs, work, extra, name=f"mutants-full-{mode}.json")
            run["verdicts"] = verdicts(ROOT / run["matrix"])
            runs[mode].append(run)
            print(f"{mode}: {run['wall_s']:.0f} s wall, {run['machine_cpu_s']:.0f} CPU-s (exit {run['exit']})",
                  flush=True)
    found: dict = {"rounds": rounds, "runs": runs}
    for key in ("wall_s", "machine_cpu_s"):
        medians = {mode: statistics.median(r[key] for r in runs[mode]) for mode in modes}
        found[key] = {**medians, "ratio_shared": round(medians["shared"] / medians["session_per_mutant"], 3)}
    first = {mode: runs[mode][0]["verdicts"] for mode in modes}
    found["verdicts_differ"] = sorted(m for m in first["shared"] if first["shared"][m] != first["session_per_mutant"].get(m))
    return found


def restarts_in(work: Path) -> dict:
    """Per session folder (a mutant, or ``none``): tests judged, tests followed by an isolation kill."""
    sessions = {}
    for session in sorted(p for p in work.iterdir() if p.is_dir() and (p / "pytest.out").exists()):
        tests = restarted = 0
        for path in (session / "latest").glob("*/history.jsonl"):  # the pytest session's own folder
            tests += 1
            restarted += any(e.name == "isolate" and (e.data or {}).get("stopped") for e in load(path))
        sessions[session.name] = {"tests": tests, "restarts": restarted}
    return sessions


def restart_cost(samples: int) -> dict:
    """CPU seconds of one isolation kill and restart of the app, the idle stack's rate taken off."""
    reaper.reap()
    stack = Stack(resolve(pyproject=find_pyproject(ROOT)), reaper.run_dir() / "stack")
    stack.start()
    costs, walls = [], []
    try:
        for _ in range(samples):
            stack.reset()  # a reset alone first: what the restart adds is measured against nothing pending
            cpu, started = machine_cpu(), time.monotonic()
            time.sleep(IDLE_WINDOW_S)  # the idle rate of this stack, just before: a measurement window
            idle_rate = (machine_cpu() - cpu) / (time.monotonic() - started)
            cpu, started = machine_cpu(), time.monotonic()
            stop_holders(stack)
            stack.reset()  # starts every killed process again and waits until each is ready
            took = time.monotonic() - started
            costs.append(machine_cpu() - cpu - idle_rate * took)
            walls.append(took)
    finally:
        stack.stop()
        reaper.remove_run_dir()
    return {"samples": samples, "cpu_s_median": round(statistics.median(costs), 2),
            "cpu_s_all": [round(c, 2) for c in costs], "wall_s_median": round(statistics.median(walls), 2)}


def inert_session(groups: int, work: Path) -> dict:
    """The false-alarm check of shared sessions: ``groups`` mutants that may share, each with every scenario
    the recorded baselines say never reaches its switch, in turn in one shared session. Each such pair runs
    the code the baseline ran, so every test must pass: a failure is a false alarm of the session or a flaky
    scenario, named either way."""
    from harness.config import find_pyproject, resolve
    from harness.mutation import MutationMatrix
    from harness.mutation_plan import Session, run_session, shareable

    reached = json.loads((work / "reach-history.json").read_text())  # {nodeid: [mutants it reached]}
    matrix = MutationMatrix(resolve(pyproject=find_pyproject(ROOT)), root=ROOT, jobs=1, out=work.parent / "inert")
    may = shareable(matrix, sorted((work / "reach").glob("shard-*")))
    fewest = sorted(may, key=lambda m: (sum(m in names for names in reached.values()), m))[:groups]
    selected = {m: sorted(n for n, names in reached.items() if m not in names) for m in fewest}
    started = time.monotonic()
    found = run_session(matrix, Session(fewest, shared=True), selected, "inert")
    return {"wall_s": round(time.monotonic() - started, 1), "pairs": sum(map(len, selected.values())),
            "groups": {m: {"pairs": len(selected[m]), "failed": o.failed,
                           "invalid": {n: v for n, v in o.violated.items() if v}} for m, o in found.items()},
            "false_alarms": sum(len(o.failed) for o in found.values())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--restarts", type=int, default=5, help="restarts to measure (0: none)")
    parser.add_argument("--from", dest="work", type=Path, default=None,
                        help="a finished run's folder (.jobquake/mutants): count, do not run")
    parser.add_argument("--compare-sessions", type=int, default=0, metavar="ROUNDS",
                        help="instead: ROUNDS runs each of one session per mutant and of shared sessions, "
                             f"alternating ({COMPARE.name})")
    parser.add_argument("--inert-session", type=int, default=0, metavar="GROUPS",
                        help="instead: the false-alarm check of shared sessions, from the last matrix's reach "
                             f"({INERT.name})")
    args = parser.parse_args()
    work = (args.work or ROOT / ".jobquake" / "mutants").resolve()
    if args.inert_session:
        found = inert_session(args.inert_session, work)
        print(json.dumps(found, indent=1))
        INERT.write_text(json.dumps(found, indent=1) + "\n")
        return
    if args.compare_sessions:
        found = compare_sessions(args.jobs, work, args.compare_sessions)
        print(json.dumps({k: v for k, v in found.items() if k != "runs"}, indent=1))
        COMPARE.write_text(json.dumps(found, indent=1) + "\n")
        return
    figures: dict = {"machine": {"cpus": os.cpu_count()}}
    if args.work is None:
        figures["run"] = run_matrix(args.jobs, work)
        print(f"matrix: {figures['run']['wall_s']:.0f} s wall, {figures['run']['machine_cpu_s']:.0f} CPU-s "
              f"of the machine (exit {figures['run']['exit']})")
    sessions = restarts_in(work)
    tests = sum(s["tests"] for s in sessions.values())
    restarts = sum(s["restarts"] for s in sessions.values())
    figures.update(sessions=sessions, tests=tests, restarts=restarts)
    print(f"{len(sessions)} sessions, {tests} tests judged, {restarts} followed by an isolation restart")
    if args.restarts:
        cost = figures["restart_cost"] = restart_cost(args.restarts)
        share = restarts * cost["cpu_s_median"]
        figures["restart_cpu_s"] = round(share, 1)
        print(f"one restart: {cost['cpu_s_median']} CPU-s (median of {cost['samples']}), "
              f"{cost['wall_s_median']} s; all restarts: {share:.0f} CPU-s")
        if "run" in figures and figures["run"]["machine_cpu_s"]:
            figures["restart_share"] = round(share / figures["run"]["machine_cpu_s"], 3)
            print(f"restarts: {figures['restart_share']:.0%} of the matrix's CPU")
    RESULTS.write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
