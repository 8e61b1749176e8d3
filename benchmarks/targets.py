"""The project's time targets, from a clean clone: `make test`, `make mutants-full`, the whole `.ci/run`.

Clones this checkout's HEAD into a fresh folder, makes the clone's
virtualenv there (``make setup`` with every extra; not timed: the targets
are for a warm virtualenv), then runs each target in the clone and times
it, with the machine's CPU (/proc/stat) and load average before and after:
a run beside other work is slower, and says so. It also samples how busy
the cores were, minute by minute (``busy_by_minute``, a share of all
cores): a target bound by the CPU shows where it left the machine idle (a
matrix's baseline, or its last session running on alone). Writes
``benchmarks/results/targets.json`` (and prints it): per target the clone's
revision, its wall time, exit code, target, and what the target's own
output says (the mutation score; `.ci/run`'s table of stages); targets not
run keep their last figures.

    flock /tmp/jq-heavy.lock .venv/bin/python benchmarks/targets.py [--only test mutants-full mutants-first-catch ci] [--keep]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from mutants_full import machine_cpu  # this script's folder: /proc/stat's busy time

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results" / "targets.json"
EXTRAS = "dev,docker,localstack"
TARGETS = {  # name -> (command in the clone, target in minutes)
    "test": (["make", "test"], 8),
    "mutants-full": (["make", "mutants-full"], 12),
    "mutants-first-catch": (["make", "mutants-first-catch"], 12),  # the question the full matrix's target asks
    "ci": (["bash", ".ci/run"], 40),
}


def clone(into: Path) -> str:
    """A clean clone of HEAD with its virtualenv; returns the revision."""
    subprocess.run(["git", "clone", "-q", str(ROOT), str(into)], check=True)
    subprocess.run(["make", "setup", f"EXTRAS={EXTRAS}"], cwd=into, check=True, stdout=subprocess.DEVNULL)
    return subprocess.run(["git", "-C", str(into), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()


SAMPLE_S = 5.0  # how often the busy share is read


class BusyShare:
    """A thread reading /proc/stat every ``SAMPLE_S``: the share of all cores busy in each interval."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="busy-share", daemon=True)

    def __enter__(self) -> "BusyShare":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        cpu, wall = machine_cpu(), time.monotonic()
        while not self._stop.wait(SAMPLE_S):
            now_cpu, now = machine_cpu(), time.monotonic()
            self.samples.append((now_cpu - cpu) / ((now - wall) * (os.cpu_count() or 1)))
            cpu, wall = now_cpu, now

    def by_minute(self) -> list[float]:
        per = max(1, round(60 / SAMPLE_S))
        return [round(sum(chunk) / len(chunk), 2)
                for chunk in (self.samples[i:i + per] for i in range(0, len(self.samples), per))]


def run_target(name: str, where: Path) -> dict:
    """Time one target in the clone; its output kept beside the results in the clone's folder."""
    command, target = TARGETS[name]
    log = where / f"target-{name}.log"
    load, cpu, started = os.getloadavg(), machine_cpu(), time.monotonic()
    with log.open("w") as out, BusyShare() as busy:
        code = subprocess.call(command, cwd=where, stdout=out, stderr=subprocess.STDOUT)
    wall = time.monotonic() - started
    text = log.read_text(errors="replace")
    found = {"command": " ".join(command), "exit": code, "wall_s": round(wall, 1),
             "wall": f"{int(wall // 60)} min {int(wall % 60)} s", "target_min": target,
             "met": code == 0 and wall <= target * 60, "machine_cpu_s": round(machine_cpu() - cpu, 1),
             "load_average_before": [round(x, 2) for x in load],
             "load_average_after": [round(x, 2) for x in os.getloadavg()],
             "busy_by_minute": busy.by_minute()}
    found["says"] = [line for line in text.splitlines()
                     if line.startswith(("mutation score", "pairs:", "first catch:", "declared catches", "ci: "))
                     or " passed" in line][-40:]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", choices=sorted(TARGETS), default=list(TARGETS))
    parser.add_argument("--keep", action="store_true", help="keep the clone (its logs) instead of removing it")
    args = parser.parse_args()
    where = Path(tempfile.mkdtemp(prefix="jobquake-targets-")) / "clone"
    figures = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}  # other targets' last figures stay
    try:
        revision = clone(where)
        for name in args.only:
            figures[name] = {"revision": revision, "cores": os.cpu_count(), **run_target(name, where)}
            print(json.dumps({name: figures[name]}, indent=1), flush=True)
            RESULTS.write_text(json.dumps(figures, indent=1) + "\n")
        print(f"results: {RESULTS}")
    finally:
        if args.keep:
            print(f"clone kept: {where}")
        else:
            shutil.rmtree(where.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
