"""A nightly run as a pytest test, for CI jobs that speak pytest:

    pytest --jobquake-nightly=2m -k jobquake_nightly [--jobquake-seed=159]
           [--jobquake-nightly-faults=kill,poison] [--jobquake-nightly-shrink=4m]

With ``--jobquake-nightly=DURATION`` the plugin adds one test,
``jobquake_nightly``, to the session. It draws the schedule from the
session's seed and ``[tool.jobquake.nightly]`` (as ``jobquake nightly``
does), plays it on the session's stack, writes the report under the
artifacts folder (``nightly/seed-N``) and fails with the invariant's
counterexample, as a scenario does; an unknown verdict fails too (the
command's exit code 2). With a shrink budget a failure is also shrunk and
the minimal scenario printed and saved next to the report.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

ITEM_NAME = "jobquake_nightly"


def add_options(group: Any) -> None:
    """The nightly's options on the plugin's option group."""
    group.addoption("--jobquake-nightly", dest="jobquake_nightly", default=None, metavar="DURATION",
                    help="add the test jobquake_nightly: a nightly run of this long (90s, 2m) on the session's "
                         "stack, failing with the invariant's counterexample")
    group.addoption("--jobquake-nightly-faults", dest="jobquake_nightly_faults", default=None, metavar="KINDS",
                    help="fault kinds of that nightly, comma-separated (default: [tool.jobquake.nightly] faults)")
    group.addoption("--jobquake-nightly-shrink", dest="jobquake_nightly_shrink", default=None, metavar="BUDGET",
                    help="shrink a failing nightly within this time (4m) and print the minimal scenario")


def _duration(config: pytest.Config, option: str) -> float | None:
    from harness.nightly.command import duration

    text = config.getoption(option)
    if text is None:
        return None
    try:
        return duration(text)
    except argparse.ArgumentTypeError as exc:
        raise pytest.UsageError(f"--{option.replace('_', '-')}: {exc}") from None


class NightlyItem(pytest.Item):
    """The nightly run as one test: its outcome is the verdict."""

    def __init__(self, *, seconds: float, **kwargs: Any):
        super().__init__(**kwargs)
        self.seconds = seconds

    def runtest(self) -> None:
        from harness.checks import violation_error

        session = self.config.pluginmanager.get_plugin("jobquake-session")
        outcome, out = run_nightly(session, self.seconds, self.config.getoption("jobquake_nightly_faults"),
                                   _duration(self.config, "jobquake_nightly_shrink") or 0.0)
        error = violation_error(outcome.verdict, outcome.artifacts, outcome.schedule.seed, unknown_fails=True)
        if error is not None:
            raise AssertionError(f"{error}\nreport: {out / 'report.html'}\nreplay: jobquake nightly --replay {out}")

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"{ITEM_NAME} ({self.seconds:g} s)"


def run_nightly(session: Any, seconds: float, faults: str | None, shrink_budget: float) -> tuple[Any, Path]:
    """Draw, play and report a nightly on the pytest session's stack; shrink a failure within the budget."""
    from harness.nightly.report import write_report
    from harness.nightly.runner import NightlyRunner, describe
    from harness.nightly.schedule import draw
    from harness.nightly.session import play_once
    from harness.nightly.settings import NightlySettings

    config = session.settings
    nightly = NightlySettings.from_config(config)
    kinds = tuple(k.strip() for k in faults.split(",") if k.strip()) if faults else nightly.kinds(config)
    schedule = draw(seed=config.seed, duration=seconds, kinds=kinds, target=nightly.target(config),
                    rate=nightly.rate, concurrency=nightly.concurrency, job_bound=nightly.bound(config),
                    sweep_every=nightly.sweep_every, replicas_of=nightly.replicas)
    out = session.artifacts_root / "nightly" / f"seed-{schedule.seed}"
    out.mkdir(parents=True, exist_ok=True)
    (out / "schedule.json").write_text(schedule.to_json())  # before it runs
    runner = NightlyRunner(config, nightly.submit_fn(config), out, nightly.sweep_hooks(config),
                           stack=session.stack(), on_run=lambda run: setattr(session, "_run", run))
    outcome = play_once(runner, schedule, out / "run", title=f"nightly seed {schedule.seed}")
    write_report(outcome, out)
    print("\n".join(describe(outcome)), flush=True)
    if outcome.exit_code == 1 and shrink_budget > 0:
        from harness.nightly.shrink import shrink_and_print

        shrink_and_print(runner, outcome, out, budget=shrink_budget)
    return outcome, out


class NightlyCollector:
    """Adds the nightly test to the session when ``--jobquake-nightly`` is given."""

    @pytest.hookimpl(tryfirst=True)  # before -k / -m deselect: they apply to this test as to any
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        seconds = _duration(config, "jobquake_nightly")
        if seconds is None:
            return
        items.append(NightlyItem.from_parent(session, name=ITEM_NAME, seconds=seconds))
