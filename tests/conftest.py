"""jobquake's own tests.

``tests/ownapp`` is a project of its own (its pyproject, its scenarios),
run from its own folder by ``tests/integration/test_ownapp.py``; it is not
collected as part of this suite.
"""
import pytest

from harness.stack import reaper

collect_ignore = ["ownapp", "reviewdesk"]


@pytest.fixture(scope="session", autouse=True)
def _run_folder_removed_at_the_end():
    """The stacks these tests start keep pid files and logs in this process's run folder; remove it
    once they have all stopped (session fixtures end last), as the plugin does after a session."""
    yield
    reaper.remove_run_dir()
