"""The plugin's state for one pytest process: the resolved config and the stack."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness import config as cfg
from harness.run import Run, artifacts_dir_for
from harness.stack import reaper
from harness.stack.stack import Stack


class JobquakeSession:
    """Registered in ``pytest_configure``; fixtures and hooks delegate here."""

    def __init__(self, config: pytest.Config):
        self.pytest_config = config
        cli = {o.key: config.getoption(f"jobquake_{o.key}") for o in cfg.OPTIONS if o.scalar}
        ini = {o.key: config.getini(f"jobquake_{o.key}") for o in cfg.OPTIONS if o.scalar}
        pyproject = config.rootpath / "pyproject.toml"
        self.settings = cfg.resolve(cli=cli, ini=ini, pyproject=pyproject if pyproject.is_file() else None)
        self._stack: Stack | None = None

    # -- hooks ---------------------------------------------------------------------
    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        s = self.settings
        return [f"jobquake: backend={s.backend} seed={s.seed} time_scale={s.time_scale} "
                f"artifacts={self.artifacts_root}"]

    @property
    def artifacts_root(self) -> Path:
        root = Path(self.settings.artifacts)
        return root if root.is_absolute() else self.pytest_config.rootpath / root

    # -- stack lifecycle -----------------------------------------------------------
    def stack(self) -> Stack:
        if self._stack is None:
            reaper.reap()  # what a killed earlier run left behind
            stack = Stack(self.settings, reaper.run_dir() / "stack")
            stack.start()
            self._stack = stack
        return self._stack

    def stop_stack(self) -> None:
        if self._stack is not None:
            self._stack.stop()
            self._stack = None
            reaper.remove_run_dir()

    def begin(self, node: pytest.Item, stack: Stack) -> Run:
        stack.reset()
        return Run(stack, self.settings, artifacts_dir_for(self.artifacts_root, node.nodeid), node.nodeid)

    def finish(self, node: pytest.Item, run: Run) -> None:
        run.save_logs()
