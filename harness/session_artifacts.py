"""This pytest session's artifacts folder: its own, under a checked artifacts folder (``_artifacts_root``).

Every process of one session (the xdist controller and its workers) shares
one folder name: the controller draws it and passes it to each worker. The
folder is made, and the artifacts folder checked, only when the session
first writes evidence, so a session that runs no scenario leaves nothing.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness._artifacts_root import checked_root, session_folder, session_id

WORKER_KEY = "jobquake_session_id"  # in xdist's workerinput
_NAME = pytest.StashKey[str]()


def session_name(config: pytest.Config) -> str:
    """The session's folder name: the controller's when this is an xdist worker."""
    if _NAME not in config.stash:
        given = getattr(config, "workerinput", {}).get(WORKER_KEY)
        config.stash[_NAME] = given or session_id()
    return config.stash[_NAME]


def artifacts_folder(config: pytest.Config, root: Path) -> Path:
    """Where this session writes its evidence (not made yet: ``make_artifacts_folder``)."""
    return root / session_name(config)


def make_artifacts_folder(config: pytest.Config, root: Path) -> Path:
    """Check the artifacts folder, make this session's folder in it and point ``latest`` at it;
    ``ArtifactsFolderError`` (a ConfigError) when the artifacts folder is not safe."""
    return session_folder(checked_root(root), session_name(config), newest=True)


class SessionArtifacts:
    """The plugin part that gives each xdist worker the session's folder name."""

    def __init__(self, config: pytest.Config):
        self.config = config

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[WORKER_KEY] = session_name(self.config)
