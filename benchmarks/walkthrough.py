"""The own-app walkthrough, timed as a new user goes through it: clone to a first verdict, then a failing scenario.

From a fresh clone of this repository, the third app (``tests/recapapp``:
its code, migrations, ``.env`` and ``requirements.txt``; no pyproject, no
scenarios) plays "my app": a virtualenv, ``pip install ./jobquake -r
myapp/requirements.txt``, ``jobquake init``, the TODOs it names filled in
(the same fills as the committed app: ``tests/unit/test_recapapp_scaffold.py``
checks they are fills only), ``pytest scenarios`` (the first verdict), then
``RECAPS_BUG=acks-early pytest scenarios/test_kill_worker.py`` (it must
fail, by ``every_job_terminal``). Each step's wall time is printed and
stored in ``benchmarks/results/walkthrough.json``. Run it under
``flock /tmp/jq-heavy.lock`` on a shared machine.

    python benchmarks/walkthrough.py [--keep DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).parent / "results" / "walkthrough.json"
APP = "tests/recapapp"
# the TODOs init names for the third app, filled in as its committed files have them
FILLS = {
    "pyproject.toml": [('# mutants = ""\n# mutant_env = ""', 'mutants = "recaps.bugs:BUGS"\nmutant_env = "RECAPS_BUG"'),
                       ('{ input = 0.0, output = 0.0 }', '{ input = 0.1, output = 0.3 }')],
}


def _sweep_fill(root: Path) -> None:
    committed = (root / "jobquake" / APP / "scenarios" / "test_sweep.py").read_text()
    start = committed.index("STALE_JOB: dict")
    end = committed.index("GOOD_ROWS")
    path = root / "myapp" / "scenarios" / "test_sweep.py"
    text = path.read_text()
    path.write_text(text.replace("STALE_JOB: dict = {}\nPOISON: dict = {}\n", committed[start:end]))


def _fill_todos(root: Path) -> None:
    for name, pairs in FILLS.items():
        path = root / "myapp" / name
        text = path.read_text()
        for old, new in pairs:
            if old not in text:
                raise SystemExit(f"{name}: init no longer writes {old!r}")
            text = text.replace(old, new)
        path.write_text(text)
    _sweep_fill(root)


def _run(step: str, cmd: list[str], cwd: Path, times: dict[str, float], env: dict[str, str] | None = None,
         expect: int | None = 0) -> subprocess.CompletedProcess:
    started = time.monotonic()
    done = subprocess.run(cmd, cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True)
    times[step] = round(time.monotonic() - started, 1)
    print(f"{step:<55} {times[step]:>7.1f} s   exit {done.returncode}", flush=True)
    if expect is not None and done.returncode != expect:
        raise SystemExit(f"{step}: exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done


def walk(root: Path) -> dict:
    times: dict[str, float] = {}
    venv = root / ".venv" / "bin"
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    _run("git clone", ["git", "clone", "-q", "--no-checkout", str(ROOT), str(root / "jobquake")], root, times)
    _run("git checkout", ["git", "-C", str(root / "jobquake"), "checkout", "-q", head], root, times)
    shutil.copytree(root / "jobquake" / APP, root / "myapp",
                    ignore=shutil.ignore_patterns("pyproject.toml", "scenarios", "__pycache__", ".jobquake"))
    _run("python3 -m venv", [sys.executable, "-m", "venv", str(root / ".venv")], root, times)
    _run("pip install ./jobquake -r myapp/requirements.txt",
         [str(venv / "pip"), "install", "-q", "./jobquake", "-r", "myapp/requirements.txt"], root, times)
    app = root / "myapp"
    _run("jobquake init --dry-run", [str(venv / "jobquake"), "init", "--dry-run"], app, times)
    init = _run("jobquake init", [str(venv / "jobquake"), "init"], app, times)
    _fill_todos(root)
    first = _run("pytest scenarios (first verdict)", [str(venv / "pytest"), "scenarios", "-q", "-p",
                                                       "no:cacheprovider"], app, times)
    failing = _run("RECAPS_BUG=acks-early pytest scenarios/test_kill_worker.py",
                   [str(venv / "pytest"), "scenarios/test_kill_worker.py", "-q", "-p", "no:cacheprovider"], app,
                   times, env={"RECAPS_BUG": "acks-early"}, expect=1)
    if "every_job_terminal [invalid]" not in failing.stdout:
        raise SystemExit("the failing scenario did not fail by every_job_terminal:\n" + failing.stdout[-3000:])
    todos = [line.strip() for line in init.stdout.splitlines() if line.startswith("  TODO ")]
    verdict = next((line for line in first.stdout.splitlines() if "scenario(s):" in line), "")
    to_verdict = sum(v for k, v in times.items() if not k.startswith("RECAPS_BUG"))
    return {"steps_s": times, "clone_to_first_verdict_s": round(to_verdict, 1),
            "clone_to_failing_scenario_s": round(sum(times.values()), 1), "todos": todos,
            "first_verdict": verdict, "load_average_at_end": os.getloadavg()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, default=None, help="walk in this (new) folder and keep it")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="jobquake-walk-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        result = walk(root)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    result["revision"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                        text=True).stdout.strip()
    print(json.dumps(result, indent=1))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
