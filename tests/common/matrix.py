"""An example app's mutation matrix run as its user runs it, and what its baseline printed."""
from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

from tests.common.children import run_cleanly

PASSED = re.compile(r"(\d+) passed")
VALID = re.compile(r"(\d+) scenario\(s\): (\d+) valid")


def run_matrix(app: Path, out: Path, jobs: int = 2) -> tuple[dict[str, Any], str]:
    """``jobquake mutants`` from ``app``'s folder: its results and the output of its run with no mutant.

    The baseline may run in shards (``none-1of2``...), each a session printing its own counts.
    """
    work = app / ".jobquake" / "mutants"  # where the matrix keeps each session's output
    shutil.rmtree(work, ignore_errors=True)  # an earlier run's output is no evidence of this one
    proc = run_cleanly([sys.executable, "-m", "harness.cli", "mutants", "--jobs", str(jobs), "--out", str(out)],
                       cwd=app, timeout=900)
    tail = proc.stdout[-4000:] + proc.stderr[-2000:]
    assert proc.returncode == 0, tail
    results = json.loads(out.read_text())
    assert results["baseline"]["exit_code"] == 0, tail
    return results, tail


def baseline_counts(app: Path) -> tuple[int, int, int, str]:
    """(tests passed, scenarios judged, scenarios valid, the output) over the baseline's sessions."""
    outputs = [p.read_text() for p in sorted((app / ".jobquake" / "mutants").glob("none*/pytest.out"))]
    assert outputs, f"no baseline output under {app / '.jobquake' / 'mutants'}"
    text = "\n".join(outputs)
    passed = sum(int(m.group(1)) for m in PASSED.finditer(text))
    judged = [(int(a), int(b)) for a, b in VALID.findall(text)]
    return passed, sum(a for a, _ in judged), sum(b for _, b in judged), text
