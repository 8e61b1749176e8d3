"""One scenario's handle on the stack: what a test touches through the ``jq`` fixture."""
from __future__ import annotations

import random
import re
from pathlib import Path

from harness.config import Config
from harness.stack.stack import Stack


def artifacts_dir_for(root: Path, nodeid: str) -> Path:
    """A readable, unique folder name for a test id."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid).strip("_")
    return Path(root) / safe[:180]


class Run:
    """The stack as one test sees it, plus that test's evidence folder and seeded RNG."""

    def __init__(self, stack: Stack, config: Config, artifacts: Path, nodeid: str):
        self.stack = stack
        self.config = config
        self.nodeid = nodeid
        self.seed = config.seed
        self.artifacts = artifacts
        self.artifacts.mkdir(parents=True, exist_ok=True)
        # one RNG per test, derived from the run seed: replaying one test replays its choices
        self.rng = random.Random(f"{config.seed}:{nodeid}")
        self.paidapi = stack.paidapi.control()
        self.proxy = stack.proxy.client()
        self.failpoints = stack.failpoints
        self.workers = stack.workers
        self.values = stack.values
        self._log_offsets = {svc.name: (svc, svc.log_offset()) for svc in stack.services()}

    @property
    def database_url(self) -> str:
        return self.values["database_url"]

    @property
    def redis_url(self) -> str:
        return self.values["redis_url"]

    def save_logs(self) -> Path:
        """Write each service's log lines from this test into ``<artifacts>/logs``."""
        folder = self.artifacts / "logs"
        folder.mkdir(exist_ok=True)
        for svc in self.stack.services():
            _svc, offset = self._log_offsets.get(svc.name, (svc, 0))
            (folder / f"{svc.name}.log").write_text(svc.logs_since(offset))
        return folder
