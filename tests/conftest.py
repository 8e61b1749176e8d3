"""jobquake's own tests.

``tests/ownapp`` and ``tests/recapapp`` are projects of their own (a
pyproject, scenarios), run from their own folders by
``tests/integration/test_ownapp.py`` / ``test_recapapp.py``; they are not
collected as part of this suite.

The two tiers are decided here, in one place: ``tests/common/tiers.py``
names the slow tests, and the hook below marks them ``slow``.
"""
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from harness.stack import reaper
from tests.common import tiers

collect_ignore = ["ownapp", "recapapp", "reviewdesk"]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--tier-durations", metavar="PATH", type=Path, default=None,
                     help="record each test's duration (setup + call + teardown) in PATH, merged with the tests "
                          f"recorded there before; tests/quality/test_tiers.py reads {tiers.DEFAULT_RECORD}")


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("--tier-durations")
    if path is not None:
        config.pluginmanager.register(tiers.DurationRecorder(path), "tier-durations")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tiers.mark_slow(items)
    if hasattr(config, "workerinput"):  # an xdist worker: the order its controller hands tests out in
        items[:] = tiers.slow_first(items)


@pytest.fixture(scope="session", autouse=True)
def _run_folder_removed_at_the_end():
    """The stacks these tests start keep pid files and logs in this process's run folder; remove it
    once they have all stopped (session fixtures end last), as the plugin does after a session."""
    yield
    reaper.remove_run_dir()


@pytest.fixture
def separate_owner(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Run folders of a stand-in owner (a live process of ours) instead of this process's own.

    A test that records pids or removes run folders must not touch this process's: under xdist the
    same process holds a session's stack, whose sockets, logs and recorded workers live there, and
    removing them would end that stack under the tests that follow.
    """
    stand_in = subprocess.Popen(["sleep", "600"])
    own = reaper.owner_id
    monkeypatch.setattr(reaper, "owner_id", lambda pid=None: own(stand_in.pid if pid is None else pid))
    try:
        yield reaper.owner_id()
        reaper.remove_run_dir()
    finally:
        stand_in.kill()
        stand_in.wait()
