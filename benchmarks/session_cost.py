"""What one scenario session costs the machine before its tests do any work: CPU-s by process.

``jobquake mutants --full`` runs one pytest session per mutant (and a few for
the baseline). Each session starts its own harness, stack and app
processes, whatever the number of scenarios it then runs. This script runs
``pytest <scenario>`` (by default the shortest scenario, the happy path) as
such a session would, ``--runs`` times. It samples every process under it
from /proc (each counted by its own CPU time, nothing twice; a child that
lived between two samples, as a Postgres backend for one connection does,
by what its parent reaped) and reads the machine's busy time from
/proc/stat. It prints the medians by process group, and what the last full
matrix's sessions cost at that price
(``benchmarks/results/mutants_full.json``). Writes
``benchmarks/results/session_cost.json``. Run it on a quiet machine:
/proc/stat counts everything.

    .venv/bin/python benchmarks/session_cost.py [--runs 5] [--scenario scenarios/test_happy_path.py] [--zygote both]
        [--out benchmarks/results/session_cost.json]

Every session must pass to be measured, so ``--scenario scenarios --runs 5
--zygote on`` also says whether the whole suite passes five runs in a row
(it stops at the first that does not).

``--against DIR`` compares this checkout with another one (``git worktree
add DIR REV``) instead: the same scenarios, app processes forked from the
zygote in both, sessions alternating between the two trees. Each session
imports the harness, refapp and the scenarios from its own tree (its working
folder comes first on ``sys.path``); the rest of the venv is shared.
Writes ``benchmarks/results/session_cost_against.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from mutants_full import machine_cpu  # this script's folder: /proc/stat's busy time
from nightly_profile import descendants, group_of, processes, waited_cpu  # this script's folder: the same /proc table

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results" / "session_cost.json"
AGAINST_RESULTS = Path(__file__).parent / "results" / "session_cost_against.json"
MATRIX = Path(__file__).parent / "results" / "mutants_full.json"
PACKED = ROOT / ".jobquake" / "mutants" / "sessions.json"  # how the last full matrix here packed its mutants
SAMPLE_S = 0.05  # a process that lives less than this between two samples is missed (its CPU too)
HARNESS = "harness (pytest)"
APP = ("zygote", "worker", "api", "relay", "consumer", "sweeper")  # the app's processes; the rest is the harness's


def one_session(scenario: str, zygote: bool = True, root: Path = ROOT) -> tuple[dict[str, float], float, float]:
    """({group: CPU-s}, machine CPU-s, wall s) of one ``pytest <scenario>`` session (app processes
    forked from the zygote, or each a fresh interpreter).

    The machine's figure leaves out this script's own sampling.
    """
    cpu0, own0, wall0 = machine_cpu(), _own_cpu(), time.monotonic()
    session = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", scenario],
                               cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={**os.environ, "JOBQUAKE_APP_ZYGOTE": str(zygote).lower()})
    last: dict[int, tuple[str, float]] = {}  # pid -> (group, own CPU-s when last seen)
    waited: dict[int, float] = {}  # pid -> CPU-s of the children it had waited for, when last seen
    parent: dict[int, int] = {}
    seen: dict[int, int] = {}  # pid -> the last sample it was seen in
    sample = 0
    while session.poll() is None:
        sample += 1
        table = processes(waited_children=False)
        tree = {session.pid, *descendants(table, session.pid)} & table.keys()
        waited.update(waited_cpu(tree))
        for pid in tree:
            ppid, cmd, cpu = table[pid]
            if pid == session.pid:
                group = HARNESS
            elif cmd.strip():
                group = group_of(cmd)
            else:  # a zombie has no command line any more: it keeps the group it had alive
                group = last.get(pid, ("other", 0.0))[0]
            last[pid], parent[pid], seen[pid] = (group, cpu), ppid, sample
        time.sleep(SAMPLE_S)
    if session.returncode != 0:
        raise SystemExit(f"pytest {scenario} exited {session.returncode}: the session must pass to be measured")
    spent: dict[str, float] = defaultdict(float)
    for group, cpu in last.values():
        spent[group] += cpu
    for pid, unseen in unseen_children(last, waited, parent, seen).items():
        spent[last[pid][0]] += unseen
    return spent, machine_cpu() - cpu0 - (_own_cpu() - own0), time.monotonic() - wall0


def unseen_children(last: dict[int, tuple[str, float]], waited: dict[int, float], parent: dict[int, int],
                    seen: dict[int, int]) -> dict[int, float]:
    """pid -> CPU-s of its children that no sample saw: those that lived less than a sample apart (a
    Postgres backend for one connection lives a few ms) and the last moments of those it saw.

    A process's waited-for CPU holds each child it reaped, grandchildren included; a child gone from
    /proc while its parent was still seen was reaped by then, so what the samples saw of it (its own
    time and its own waited-for time) is taken off, and the rest was never seen.
    """
    reaped: dict[int, float] = defaultdict(float)
    for pid, ppid in parent.items():
        if ppid in seen and seen[pid] < seen[ppid]:
            reaped[ppid] += last[pid][1] + waited.get(pid, 0.0)
    return {pid: max(0.0, total - reaped[pid]) for pid, total in waited.items() if pid in last}


def _own_cpu() -> float:
    own = os.times()
    return own.user + own.system


def matrix_sessions() -> int | None:
    """Sessions the last full matrix ran: the baseline's shards, plus those its mutants were packed into
    (``.jobquake/mutants/sessions.json``; before mutants shared sessions, one per mutant)."""
    from harness.mutation_baseline import BASELINE_SHARDS

    if PACKED.exists():
        return len(json.loads(PACKED.read_text())) + BASELINE_SHARDS
    if not MATRIX.exists():
        return None
    return len(json.loads(MATRIX.read_text())["mutants"]) + BASELINE_SHARDS


def summary(runs: list[tuple[dict[str, float], float, float]]) -> dict:
    """Medians by group and of the machine over ``runs``."""
    groups = sorted({g for spent, _, _ in runs for g in spent})
    medians = {g: round(statistics.median(spent.get(g, 0.0) for spent, _, _ in runs), 2) for g in groups}
    medians = dict(sorted(medians.items(), key=lambda kv: -kv[1]))
    return {"runs": len(runs), "cpu_s_median": medians,
            "app_cpu_s": round(sum(v for g, v in medians.items() if g in APP), 2),
            "machine_cpu_s_median": round(statistics.median(m for _, m, _ in runs), 2),
            "machine_cpu_s_all": [round(m, 2) for _, m, _ in runs],
            "wall_s_median": round(statistics.median(w for _, _, w in runs), 1)}


def show(title: str, found: dict) -> None:
    """Print one ``summary``: its groups, then the machine's median."""
    print(f"-- {title}")
    for group, cpu in found["cpu_s_median"].items():
        print(f"{cpu:6.2f} CPU-s  {group}")
    print(f"{found['machine_cpu_s_median']:6.2f} CPU-s  the machine, per session (median of {found['runs']}); "
          f"app processes {found['app_cpu_s']} CPU-s; wall {found['wall_s_median']} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--scenario", default="scenarios/test_happy_path.py")
    parser.add_argument("--zygote", choices=("on", "off", "both"), default="both",
                        help="app processes forked from the zygote, fresh interpreters, or both alternating")
    parser.add_argument("--against", type=Path, help="another checkout to compare this one with, side by side")
    parser.add_argument("--out", type=Path, default=RESULTS, help=f"where the figures go (default {RESULTS.name})")
    args = parser.parse_args()
    if args.against:
        return compare(args.scenario, args.runs, args.against.resolve())
    modes = {"on": [True], "off": [False], "both": [True, False]}[args.zygote]
    runs: dict[bool, list] = {mode: [] for mode in modes}
    for _ in range(args.runs):
        for mode in modes:  # alternating: both see the same machine
            runs[mode].append(one_session(args.scenario, zygote=mode))
    figures = {"scenario": args.scenario, "cores": os.cpu_count(), "revision": _revision(ROOT)}
    for mode in modes:
        key = "zygote" if mode else "fresh_interpreters"
        figures[key] = summary(runs[mode])
        show(f"app processes {'forked from the zygote' if mode else 'each a fresh interpreter'}", figures[key])
    if len(modes) == 2:
        ratio = figures["zygote"]["machine_cpu_s_median"] / figures["fresh_interpreters"]["machine_cpu_s_median"]
        figures["machine_ratio_zygote_to_fresh"] = round(ratio, 2)
        print(f"zygote / fresh interpreters, machine CPU per session: {ratio:.2f}")
    machine = figures["zygote" if True in modes else "fresh_interpreters"]["machine_cpu_s_median"]
    # a folder of scenarios costs more than a session's fixed cost: no matrix floor from it
    sessions = None if (ROOT / args.scenario).is_dir() else matrix_sessions()
    if sessions:
        floor = sessions * machine
        figures["matrix"] = {"sessions": sessions, "cpu_s_at_this_cost": round(floor, 1),
                             "minutes_of_all_cores": round(floor / os.cpu_count() / 60, 1)}
        print(f"the last full matrix ran {sessions} sessions: {floor:.0f} CPU-s at this cost, "
              f"{floor / os.cpu_count() / 60:.1f} min of all {os.cpu_count()} cores before any scenario's own work")
    args.out.write_text(json.dumps(figures, indent=1) + "\n")


def compare(scenario: str, runs: int, other: Path) -> None:
    """This checkout against ``other``, sessions alternating; prints and stores both summaries and the ratio."""
    if not (other / "harness").is_dir():
        raise SystemExit(f"{other} is not a checkout of this project (no harness/ folder)")
    trees = {"this": ROOT, "against": other}
    found: dict[str, list] = {name: [] for name in trees}
    for _ in range(runs):
        for name, root in trees.items():  # alternating: both see the same machine
            found[name].append(one_session(scenario, root=root))
    figures = {"scenario": scenario, "cores": os.cpu_count(), "revisions": {k: _revision(v) for k, v in trees.items()}}
    for name in trees:
        figures[name] = summary(found[name])
        show(f"{name}: {figures['revisions'][name]} ({trees[name]})", figures[name])
    ratio = figures["this"]["machine_cpu_s_median"] / figures["against"]["machine_cpu_s_median"]
    figures["machine_ratio_this_to_against"] = round(ratio, 2)
    print(f"this / against, machine CPU per session: {ratio:.2f}")
    AGAINST_RESULTS.write_text(json.dumps(figures, indent=1) + "\n")


def _revision(root: Path) -> str:
    done = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or "?"


if __name__ == "__main__":
    main()
