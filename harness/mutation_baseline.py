"""The matrix's run with no mutant, recording which scenarios reach which switch (``harness.mutation_reach``).

Every mutant's session waits for it (the reach decides what runs, and with
whom a mutant may share a session), so it runs in shards at once, balanced
by what each scenario took in the last baseline (``durations.json`` in the
matrix's folder): shards of equal test counts ended up to a minute apart
on refapp's suite, the machine half idle while the longest ran alone.
"""
from __future__ import annotations

import json
import shutil
import statistics
import time
from dataclasses import replace
from pathlib import Path

from harness.mutation import MutationMatrix, Outcome, joined
from harness.mutation_reach import ENV_VAR as REACH_ENV
from harness.mutation_reach import read_windows

# the baseline's sessions at once: split four ways over refapp's suite it took 82 s, against 221 s as one
# session (the full matrix's figures); each shard pays a stack's start and stop, so not more
BASELINE_SHARDS = 4


DURATIONS = "durations.json"  # {nodeid: seconds} of the last baseline that ran it


def baseline_shards(nodeids: list[str], count: int, took: dict[str, float] | None = None) -> list[list[str]]:
    """Whole test files in ``count`` shards, in suite order within a shard; no shard is empty.

    Each file, the costliest first, goes to the shard that would end first. A
    test's cost is its seconds in ``took``; a test not there (new, or no
    baseline yet) costs the median of those that are (1 when none are), so
    with no record at all the shards balance test counts.
    """
    took = took or {}
    known = [took[n] for n in nodeids if n in took]
    default = statistics.median(known) if known else 1.0
    files: dict[str, list[str]] = {}
    for nodeid in nodeids:
        files.setdefault(nodeid.split("::")[0], []).append(nodeid)

    def cost(tests: list[str]) -> float:
        return sum(took.get(n, default) for n in tests)

    shards: list[list[str]] = [[] for _ in range(max(1, min(count, len(files))))]
    for tests in sorted(files.values(), key=lambda tests: (-cost(tests), tests[0])):
        min(shards, key=lambda shard: (cost(shard), len(shard))).extend(tests)
    order = {nodeid: i for i, nodeid in enumerate(nodeids)}
    return [sorted(shard, key=order.__getitem__) for shard in shards]


def read_durations(path: Path) -> dict[str, float]:
    """The durations a baseline kept (none when there is no readable record)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): float(v) for k, v in data.items() if isinstance(v, (int, float))}


def keep_durations(path: Path, took: dict[str, float]) -> None:
    """Record ``took`` over what ``path`` kept (a scenario this baseline did not run keeps its last figure)."""
    path.write_text(json.dumps({**read_durations(path), **{k: round(v, 2) for k, v in took.items()}},
                               indent=1, sort_keys=True))


def run_baseline(matrix: MutationMatrix, nodeids: list[str]) -> tuple[Outcome, list[Path]]:
    """The run with no mutant, recording reach: in shards at once when ``matrix.jobs`` allows.

    Every mutant's session waits for the baseline's reach, so a baseline run
    alone would leave the machine mostly idle for the length of the whole
    suite. Each shard is a session of its own (its own stack and reach folder).
    """
    durations = matrix.work / DURATIONS
    shards = baseline_shards(nodeids, min(matrix.jobs, BASELINE_SHARDS), read_durations(durations))
    folders = [matrix.work / "reach" / f"shard-{i + 1}" for i in range(len(shards))]
    shutil.rmtree(matrix.work / "reach", ignore_errors=True)
    for folder in folders:
        folder.mkdir(parents=True)
    # containers neither inherit the variable nor share the host's pids: the docker backend runs every pair
    recording = matrix.config.backend == "process"

    def run(i: int) -> Outcome:
        env = {REACH_ENV: str(folders[i])} if recording else {}
        if len(shards) == 1:
            return matrix.run_one(None, matrix.suite_or(shards[0]), env)
        return matrix.run_one(None, shards[i], env, label=f"none-{i + 1}of{len(shards)}")

    started = time.monotonic()
    outcomes = matrix.in_parallel(run, range(len(shards)), jobs=len(shards))
    merged = replace(joined(outcomes), seconds=time.monotonic() - started)  # the shards ran at once: their wall
    keep_durations(durations, spans(folders))
    return merged, folders


def spans(reach: list[Path]) -> dict[str, float]:
    """{nodeid: seconds from its setup to its teardown's end} in the baseline: what a scenario costs."""
    return {w.nodeid: w.end - w.setup for folder in reach for w in read_windows(folder)}
