"""A nightly run from start to verdict: stack, progress, run, report, and shrinking when it fails."""
from __future__ import annotations

import sys
from pathlib import Path

from harness.config import Config
from harness.nightly.progress import progress_for
from harness.nightly.runner import NightlyRunner, Outcome, describe
from harness.nightly.schedule import Schedule
from harness.nightly.settings import NightlySettings


def play_once(runner: NightlyRunner, schedule: Schedule, folder: Path, title: str) -> Outcome:
    """One run of ``schedule`` with progress on stdout."""
    progress = progress_for(schedule.duration, title=title)
    outcome = None
    try:
        outcome = runner.run_schedule(schedule, folder, on_tick=progress, title=title)
    finally:
        progress.close(outcome.driven.status if outcome else None)
    return outcome


def nightly_session(config: Config, nightly: NightlySettings, schedule: Schedule, out: Path,
                    *, shrink_budget: float) -> int:
    """Run ``schedule``, write its report into ``out``; shrink a failure within ``shrink_budget`` s."""
    from harness.nightly.report import write_report

    out.mkdir(parents=True, exist_ok=True)
    (out / "schedule.json").write_text(schedule.to_json())  # before it runs: a crash can be replayed
    print(f"jobquake nightly: seed {schedule.seed}, {schedule.duration:g} s, {schedule.jobs} jobs at "
          f"{schedule.rate:g}/s, {len(schedule.faults)} faults; schedule: {out / 'schedule.json'}", flush=True)
    with NightlyRunner(config, nightly.submit_fn(config), out, nightly.sweep_hooks(config)) as runner:
        outcome = play_once(runner, schedule, out / "run", title=f"nightly seed {schedule.seed}")
        report = write_report(outcome, out)
        for text in describe(outcome):
            print(text)
        print(f"report: {report}\nreplay: jobquake nightly --replay {out}")
        if outcome.exit_code == 1 and shrink_budget > 0:
            from harness.nightly.shrink import shrink_and_print

            shrink_and_print(runner, outcome, out, budget=shrink_budget)
    sys.stdout.flush()
    return outcome.exit_code
