"""The suite's two tiers: which tests are slow, and the durations that keep the split honest.

The fast tier (``make test``) is every test not marked ``slow``, run in
parallel; the slow tier (``make test-all``, what CI runs) is everything. A
test is slow when it runs a nightly, a mutation matrix or another app's
whole suite: the files listed in ``SLOW_FILES``. ``tests/conftest.py``
marks them at collection, so no test file carries the mark by hand.

A list of files can fall behind the tests, so every run can record how long
each test took (``--tier-durations=PATH``, JSON, the last ``KEEP`` runs).
``over_budget`` judges a test by its fastest recorded run: any test that
took longer than ``BUDGET_S`` and is not slow by ``is_slow`` belongs in
``SLOW_FILES`` (``tests/quality/test_tiers.py`` fails until it is there).
"""
from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

import pytest

# a fast test may take this long, its setup and teardown included, measured in a parallel run beside the
# slow tier. The longest fast test took 18 s there (it pays for starting refapp's stack), 39 s in a fast-tier
# run on a machine loaded by others (load average 12 on 2 cores): hence the fastest of the last KEEP runs.
# A 30 s test would be a sixteenth of the fast tier's 8 minutes on one of two workers
BUDGET_S = 30.0
# what the slow tier's run leaves behind for tests/quality/test_tiers.py (the artifacts folder is ignored by git)
DEFAULT_RECORD = Path(".jobquake") / "test-durations.json"
KEEP = 3  # runs the record keeps per test; a test is judged by its fastest (a shared machine slows some runs)

# nightly runs, mutation matrices and other apps' whole suites; paths from the repository root, the longest
# first (each file's seconds in a CI run's `make test-all`): the slow tier's tests are handed out in this order
SLOW_FILES = (
    "tests/quality/test_nightly_shrink.py",  # 446 s: two nightlies shrunk, each scenario printed and rerun
    "tests/integration/test_recapapp.py",  # 323 s: the third app's full matrix, every scenario against 6 bugs
    "tests/integration/test_reviewdesk.py",  # 192 s: the Django app's mutation matrix: 7 sessions
    "tests/integration/test_install_orders.py",  # 190 s: two environments installed from PyPI, a scenario in each
    "tests/integration/test_nightly_pytest_entry.py",  # 168 s: a minute on refapp, replayed on a mutant; another app
    "tests/integration/test_nightly_transit.py",  # 168 s: the sweeper off across two outages, correct app and mutant
    "tests/integration/test_ownapp.py",  # 138 s: the second app's mutation matrix: 7 sessions
    "tests/quality/test_nightly_finds.py",  # 376 s: 3 x 2-minute nightlies, one per mutant
    "tests/docs/test_scenarios.py",  # 79 s: the docs' scenarios in a session against refapp
    "tests/integration/test_nightly.py",  # 43 s: a 15 s nightly, then its replay
    "tests/integration/test_debris.py",  # 19 s: a whole session of the kill scenarios
    "tests/integration/test_mutation_session.py",  # 10 s: a session of three mutants in turn
    "tests/plugin/test_sessions_apart.py",  # 10 s: two sessions at once
)


def is_slow(nodeid: str) -> bool:
    """Whether the test ``nodeid`` (as pytest prints it, from the repository root) is in the slow tier."""
    return _path(nodeid) in SLOW_FILES


def mark_slow(items: list[pytest.Item]) -> None:
    """Mark the slow tier's tests ``slow`` (from a ``pytest_collection_modifyitems`` hook)."""
    for item in items:
        if is_slow(item.nodeid):
            item.add_marker(pytest.mark.slow)


def slow_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """The slow tier's tests first, longest file first, then the rest, each in collection order.

    For xdist: a worker that starts a 6-minute test near the end keeps the
    whole run waiting for it, while one that starts it first has the other
    worker run everything else meanwhile.
    """
    rank = {path: i for i, path in enumerate(SLOW_FILES)}
    order = {id(item): i for i, item in enumerate(items)}
    return sorted(items, key=lambda item: (rank.get(_path(item.nodeid), len(rank)), order[id(item)]))


def _path(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def over_budget(durations: dict[str, float], budget: float = BUDGET_S) -> dict[str, float]:
    """{nodeid: seconds} of the tests that took longer than ``budget`` and are not in the slow tier."""
    return {nodeid: took for nodeid, took in sorted(durations.items())
            if took > budget and not is_slow(nodeid)}


class DurationRecorder:
    """Adds up each test's setup, call and teardown; at the end, adds them to a JSON record.

    Registered by ``tests/conftest.py`` when ``--tier-durations`` is given.
    Under xdist the reports reach the controlling process, which alone
    writes. The record keeps each test's last ``KEEP`` durations, and the
    tests this run did not run (a fast-tier run leaves the slow tier's as
    they were).
    """

    def __init__(self, path: Path):
        self.path = path
        self.taken: dict[str, float] = defaultdict(float)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.taken[report.nodeid] += report.duration

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(session.config, "workerinput"):  # an xdist worker: its controller writes
            return
        recorded = read(self.path) if self.path.exists() else {}
        for nodeid, took in self.taken.items():
            recorded[nodeid] = [*recorded.get(nodeid, []), round(took, 2)][-KEEP:]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(dict(sorted(recorded.items()))) + "\n")
        os.replace(tmp, self.path)


def read(path: Path) -> dict[str, list[float]]:
    """A record written by ``DurationRecorder``: {nodeid: its last durations in seconds, the latest last}."""
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or not all(isinstance(v, list) and v and all(isinstance(x, (int, float)) for x in v)
                                             for v in data.values()):
        raise ValueError(f"{path}: not a test-durations record ({{nodeid: [seconds, ...]}}); delete it and run "
                         f"`make test-all` to record a new one")
    return {str(k): [float(x) for x in v] for k, v in data.items()}


def fastest(record: dict[str, list[float]]) -> dict[str, float]:
    """Each test's fastest recorded run: other work on the machine only ever slows a test down."""
    return {nodeid: min(durations) for nodeid, durations in record.items()}
