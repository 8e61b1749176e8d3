"""Mutant reach: which scenarios get to a mutant's switch, so ``--full`` runs only those pairs.

Coverage-based test selection, as mutation-testing tools do it (PIT runs a
mutant only against the tests that cover its line): a scenario that never
gets to a mutant's switch runs the same code with the mutant on as without
it, so its result is the baseline's and the pair need not run.

**Recording.** When ``JOBQUAKE_MUTANT_REACH`` names a folder, the app's
mutant switch appends ``<pid> <unix time> <name>`` to a file of its own in
that folder each time it is asked about ``name`` (at most one line per
``BUCKET_S`` bucket and name, dated by the bucket's first reach: a reach
at time t has a line at most ``BUCKET_S`` before t, never after it). A line ``<pid> <time> @start`` may date the start of
that process's program (else its first line does); ``<pid> <time> @fork``
says the process is a child forked without exec, whose start-up is its
parent's (a Celery pool process). ``--full`` sets the
variable in the baseline session, whose app processes inherit it, and the
plugin then writes each test's window (setup start, call start, teardown
end, its own pid) to ``windows.jsonl`` there. An app whose switch writes nothing gets
every pair run.

**Attribution** (a reach by process P of ``name`` at time t), built to
over-approximate, never to miss a pair that could behave differently:

* a reach inside a test's call or teardown (the window's start moved
  back by ``BUCKET_S``, since a line may date a reach up to that much
  later; its end not moved, since no line is dated after its reach)
  counts for that test: the switch acted while it ran;
* a reach outside every call and teardown (before the first test, between
  tests, during a setup: when the stack starts or resets), or during P's
  start-up, counts for **every test that ends after it**. The stack lives
  across tests and its processes persist: a switch read once at start (a
  configuration: acks late, a worker's command line, a queue's redrive
  policy written into the broker) shapes every later test that process, or
  the state it made, serves. A process's end is not recorded, so it is
  taken to live to the session's end; a worker restarted by a test starts
  again, and its start-up reads count from then on.
* P's start-up: ``STARTUP_S`` from its start when a test's call started it;
  when it started outside any call (with the stack, or by a reset), until
  the next call begins at the latest, since the harness waits for every
  service it starts to be ready before a test goes on; none for a fork
  (its start-up is its parent's).
* a test without a recorded window (it did not run in the baseline)
  counts as reaching every mutant.

What this cannot see: a pair whose run takes a path the baseline never took
(the mutant does not change it: only timing could, e.g. a sweep row that
fails only under load), and a switch read after its process's start-up
whose answer is kept (refapp reads its configuration switches before it
says it is ready). Against the first, ``--full`` joins each scenario's
reach over every baseline it has recorded (``reach-history.json`` in its
work folder), so a path taken once keeps its pairs running.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

import pytest

ENV_VAR = "JOBQUAKE_MUTANT_REACH"
WINDOWS_FILE = "windows.jsonl"
START = "@start"
FORK = "@fork"
BUCKET_S = 1.0  # the switch's bucket: a line is at most this far from the reach it stands for
STARTUP_S = 30.0  # a process's start-up: configuration is read here, and kept


@dataclass(frozen=True)
class Window:
    """One test of the baseline session: setup start, call start (None: never called), teardown end,
    and the pid of the pytest process that ran it (None in windows written before it was recorded)."""

    nodeid: str
    setup: float
    call: float | None
    end: float
    pid: int | None = None


@dataclass
class Process:
    """One app process's reach lines: (unix time, mutant name), and when its program started."""

    pid: int
    start: float | None = None
    reaches: list[tuple[float, str]] = field(default_factory=list)
    forked: bool = False  # a child forked without exec: its start-up reads are its parent's

    @property
    def started(self) -> float:
        return self.start if self.start is not None else min((t for t, _ in self.reaches), default=0.0)


def read_processes(folder: Path) -> dict[int, Process]:
    """Every process's lines in the reach folder (any file but the windows); malformed lines skipped."""
    processes: dict[int, Process] = {}
    for path in sorted(Path(folder).iterdir()):
        if path.name == WINDOWS_FILE or not path.is_file():
            continue
        for line in path.read_text(errors="replace").splitlines():
            parts = line.split()
            if len(parts) != 3:
                continue  # a line cut by a kill mid-write
            try:
                pid, when = int(parts[0]), float(parts[1])
            except ValueError:
                continue
            process = processes.setdefault(pid, Process(pid))
            if parts[2] == START:
                process.start = when
            elif parts[2] == FORK:
                process.forked = True
            else:
                process.reaches.append((when, parts[2]))
    return processes


def read_windows(folder: Path) -> list[Window]:
    """The baseline's test windows, in the order the tests ran."""
    path = Path(folder) / WINDOWS_FILE
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [Window(r["nodeid"], r["setup"], r.get("call"), r["end"], r.get("pid")) for r in rows]


def _running(windows: list[Window], when: float) -> list[Window]:
    """The tests whose call or teardown a line dated ``when`` may stand for (its bucket runs on after it)."""
    return [w for w in windows if w.call is not None and w.call - BUCKET_S <= when <= w.end]


def start_up_end(process: Process, windows: list[Window]) -> float:
    """Until when ``process`` may be starting up: reading configuration that it keeps."""
    if process.forked:  # its start-up is its parent's: its first reach, even at the fork, is work
        return float("-inf")
    started = process.started
    if _running(windows, started):  # started by a test: STARTUP_S
        return started + STARTUP_S
    # started outside a test's call (with the stack, or by a reset): ready before the next call began
    calls = [w.call for w in windows if w.call is not None and w.call >= started]
    return min([started + STARTUP_S, *calls[:1]])


def attribute(processes: Iterable[Process], windows: list[Window]) -> dict[str, set[str]]:
    """{nodeid: mutant names its run may have reached}, by the rule of the module docstring."""
    reached: dict[str, set[str]] = {w.nodeid: set() for w in windows}
    for process in processes:
        starting = start_up_end(process, windows)
        for when, name in process.reaches:
            running = _running(windows, when)
            if not running or when <= starting:
                running = [w for w in windows if w.end >= when - BUCKET_S]  # kept for the rest of the session
            for window in running:
                reached[window.nodeid].add(name)
    return reached


def asked_by_the_session(folders: Iterable[Path]) -> set[str] | None:
    """The mutants whose switch the baseline's pytest process itself asked (app code the scenarios
    run in-process); None when a folder's windows do not say which process that was.

    Such a process reads its settings once and keeps them, so a mutant it asks
    for must be on from its first import: that mutant cannot share a session
    with others (``harness.mutation_session``).
    """
    asked: set[str] = set()
    for folder in folders:
        pids = {w.pid for w in read_windows(folder)}
        if not pids or None in pids:
            return None
        processes = read_processes(folder)
        asked.update(name for pid in pids if pid in processes for _, name in processes[pid].reaches)
    return asked


def scenarios_reaching(folders: Path | Iterable[Path], nodeids: Iterable[str], mutants: Iterable[str],
                       history: Path | None = None) -> dict[str, list[str]] | None:
    """{mutant: the scenarios among ``nodeids`` that reach it}; None when the app recorded no reach at all.

    ``folders``: one reach folder per baseline session (a baseline run in
    shards has one each, over disjoint tests; a session's processes serve
    only its own tests). With ``history`` (a JSON file, updated here), what
    each scenario reached in earlier baselines counts too: a path a scenario
    takes only with some timing is then less likely to be missed.
    """
    recorded, reached = False, {}
    for folder in [folders] if isinstance(folders, Path) else folders:
        processes = read_processes(folder)
        recorded = recorded or any(p.reaches for p in processes.values())
        reached.update(attribute(processes.values(), read_windows(folder)))
    if not recorded:
        return None  # the app's switch does not honour the variable: nothing can be skipped
    if history is not None:
        reached = _with_history(history, reached)
    everything = object()
    per_test = {nodeid: reached.get(nodeid, everything) for nodeid in nodeids}
    return {name: sorted(n for n, names in per_test.items() if names is everything or name in names)
            for name in mutants}


def _with_history(path: Path, reached: dict[str, set[str]]) -> dict[str, set[str]]:
    """This baseline's reach joined with every earlier one's kept in ``path``; the join is saved."""
    earlier = json.loads(path.read_text()) if path.exists() else {}
    joined = {nodeid: set(names) for nodeid, names in earlier.items()}
    for nodeid, names in reached.items():
        joined.setdefault(nodeid, set()).update(names)
    path.write_text(json.dumps({nodeid: sorted(names) for nodeid, names in sorted(joined.items())}, indent=1))
    return {nodeid: joined[nodeid] for nodeid in reached}


class WindowRecorder:
    """Plugin (registered when ``JOBQUAKE_MUTANT_REACH`` is set): writes each test's window."""

    def __init__(self, folder: Path):
        self.path = Path(folder) / WINDOWS_FILE
        self.calls: dict[str, float] = {}

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
        setup = time.time()
        try:
            return (yield)
        finally:
            row = {"nodeid": item.nodeid, "setup": setup, "call": self.calls.pop(item.nodeid, None),
                   "end": time.time(), "pid": os.getpid()}
            with self.path.open("a") as out:
                out.write(json.dumps(row) + "\n")

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> None:
        self.calls[item.nodeid] = time.time()
