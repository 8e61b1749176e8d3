"""The artifacts folder of one scenario: what a run leaves behind to read and re-check.

Layout::

    <dir>/history.jsonl   every event, one JSON object a line (written as the run goes)
    <dir>/snapshot.json   the final DB snapshot (``Snapshot.to_dict``)
    <dir>/verdict.json    the verdict (``Verdict.to_dict``) plus ``checks`` (names, in
                          order), ``seed``, ``nodeid`` and ``title``
    <dir>/timeline.html   the self-contained HTML timeline
    <dir>/logs/*.log      service and worker logs

A run's root folder holds one such folder per scenario; ``jobquake report``
accepts either.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.checks.result import Verdict
from harness.history.history import History
from harness.history.recorder import load
from harness.history.snapshot import Snapshot
from harness.report.html import render_html

HISTORY = "history.jsonl"
SNAPSHOT = "snapshot.json"
VERDICT = "verdict.json"
TIMELINE = "timeline.html"
LOGS = "logs"


@dataclass
class Artifacts:
    """One scenario's stored evidence, as loaded back."""

    root: Path
    history: History
    snapshot: Snapshot | None
    stored: dict[str, Any]  # verdict.json as written (empty if missing)

    @property
    def title(self) -> str:
        return self.stored.get("title") or self.stored.get("nodeid") or self.root.name


def _write_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_verdict(root: Path, verdict: Verdict, **extra: Any) -> None:
    """verdict.json: the verdict, the checker names in order, and run facts (seed, nodeid...)."""
    body = {**verdict.to_dict(), "checks": verdict.names(), **extra}
    _write_text(root / VERDICT, json.dumps(body, indent=1, default=str))


def write_artifacts(root: str | os.PathLike[str], history: History, snapshot: Snapshot | None,
                    verdict: Verdict, title: str, seed: int | None = None,
                    nodeid: str | None = None) -> Path:
    """Write every file of the layout; history.jsonl only if the Recorder did not already."""
    root = Path(root)
    (root / LOGS).mkdir(parents=True, exist_ok=True)
    if not (root / HISTORY).exists():
        _write_text(root / HISTORY, "".join(e.to_json() + "\n" for e in history))
    if snapshot is not None:
        snapshot.save(root / SNAPSHOT)
    write_verdict(root, verdict, seed=seed, nodeid=nodeid, title=title)
    _write_text(root / TIMELINE, render_html(history, verdict, snapshot, title))
    return root


def load_artifacts(root: str | os.PathLike[str]) -> Artifacts:
    """Read a folder back; a missing snapshot or verdict is None / empty, not an error."""
    root = Path(root)
    snapshot = Snapshot.load(root / SNAPSHOT) if (root / SNAPSHOT).exists() else None
    stored = json.loads((root / VERDICT).read_text(encoding="utf-8")) if (root / VERDICT).exists() else {}
    return Artifacts(root, load(root / HISTORY), snapshot, stored)


def find_artifact_dirs(path: str | os.PathLike[str]) -> list[Path]:
    """``path`` itself if it holds a history, else every folder below it that does."""
    path = Path(path)
    if (path / HISTORY).is_file():
        return [path]
    return sorted(p.parent for p in path.rglob(HISTORY))
