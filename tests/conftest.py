"""jobquake's own tests.

``tests/ownapp`` and ``tests/recapapp`` are projects of their own (a
pyproject, scenarios), run from their own folders by
``tests/integration/test_ownapp.py`` / ``test_recapapp.py``; they are not
collected as part of this suite.
"""
import pytest

from harness.stack import reaper

collect_ignore = ["ownapp", "recapapp"]


@pytest.fixture(scope="session", autouse=True)
def _run_folder_removed_at_the_end():
    """The stacks these tests start keep pid files and logs in this process's run folder; remove it
    once they have all stopped (session fixtures end last), as the plugin does after a session."""
    yield
    reaper.remove_run_dir()
