"""The mutation matrix: does each scenario catch the bug it was written for?

A scenario declares the bugs it exists to catch with
``@pytest.mark.catches("acks-early", invariant="every_job_terminal")``. The
app names its mutants (config ``mutants``) and the environment variable that
switches one on in its processes (``mutant_env``). ``jobquake mutants``
then runs the scenario suite once with no mutant (everything must pass) and,
for each mutant, the scenarios that declare it, in a fresh pytest process
whose app processes carry the mutant. A mutant is caught when one of its
scenarios fails with the declared invariant invalid; a mutant that survives
is a finding about the scenario or the checker. Where no scenario declares
anything (an app's own scenarios, as ``jobquake init`` writes them), the
command runs the full matrix instead (``mutation_full.py``) and says so.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, TypeVar

from harness.config import Config, load_callable
from harness.errors import ConfigError
from harness._artifacts_root import through_latest

T = TypeVar("T")
# runs the baseline and each mutant's scenarios: (matrix, {mutant: nodeids}, every scenario) -> outcomes
Runner = Callable[["MutationMatrix", dict[str, list[str]], list[str]], tuple["Outcome", dict[str, "Outcome"]]]


def write_catches(path: str, items: Iterable[Any]) -> None:
    """For ``--jobquake-list-catches``: {nodeid: [[mutant, invariant], ...]} of collected items."""
    catches = {}
    for item in items:
        marks = [(m.args[0], m.kwargs.get("invariant")) for m in item.iter_markers("catches") if m.args]
        catches[item.nodeid] = marks
    Path(path).write_text(json.dumps(catches, indent=1))


@dataclass
class Outcome:
    """One pytest run: its exit code, the invariants each scenario violated, its duration."""

    mutant: str | None
    nodeids: list[str]
    exit_code: int
    violated: dict[str, list[str]] = field(default_factory=dict)  # nodeid -> invalid invariants
    failed: list[str] = field(default_factory=list)
    seconds: float = 0.0
    not_run: list[str] = field(default_factory=list)  # planned, left out: the mutant was caught already
    why: dict[str, str] = field(default_factory=dict)  # nodeid -> pytest's one-line reason it failed


def joined(outcomes: list[Outcome]) -> Outcome:
    """Outcomes of sessions over disjoint scenarios (a mutant's parts, the baseline's shards) as one: the
    first's mutant, every scenario, the worst exit code, the seconds summed."""
    return Outcome(outcomes[0].mutant, [n for o in outcomes for n in o.nodeids], max(o.exit_code for o in outcomes),
                   {k: v for o in outcomes for k, v in o.violated.items()},
                   sorted({n for o in outcomes for n in o.failed}), sum(o.seconds for o in outcomes),
                   [n for o in outcomes for n in o.not_run], {k: v for o in outcomes for k, v in o.why.items()})


@dataclass
class MutantResult:
    name: str
    description: str
    expected: list[tuple[str, str | None]]  # (nodeid, invariant)
    outcome: Outcome | None

    @property
    def caught_by(self) -> list[tuple[str, str]]:
        if self.outcome is None:
            return []
        found = []
        for nodeid, invariant in self.expected:
            flagged = self.outcome.violated.get(nodeid, [])
            if invariant in flagged or (invariant is None and nodeid in self.outcome.failed):
                found.append((nodeid, invariant or "failure"))
        return found

    @property
    def caught(self) -> bool:
        return bool(self.caught_by)


class MutationMatrix:
    """Runs the suite against the app and each of its mutants; see the module docstring."""

    def __init__(self, config: Config, *, root: Path, jobs: int = 2, out: Path | None = None,
                 extra_args: list[str] | None = None):
        if not config.mutants or not config.mutant_env:
            raise ConfigError("the mutation matrix needs config keys 'mutants' and 'mutant_env'", key="mutants")
        self.config = config
        self.root = root
        self.jobs = jobs
        self.extra_args = list(extra_args or [])
        self.mutants: dict[str, str] = dict(load_callable(config.mutants, "mutants", root, kind="mapping"))
        self.known = dict(self.mutants)  # ``mutants`` may be narrowed to a few; scenarios may name any known one
        self.work = out or root / ".jobquake" / "mutants"
        self.scenarios = str(root / config.scenarios)
        self._children: set[subprocess.Popen] = set()
        self._catches: dict[str, list[tuple[str, str | None]]] | None = None

    def declares_nothing(self) -> bool:
        """True when no scenario declares that it catches any of the mutants asked for: then only
        the full matrix (every scenario against every mutant) measures anything."""
        return not any(m in self.mutants for marks in self.catches().values() for m, _ in marks)

    def catches(self) -> dict[str, list[tuple[str, str | None]]]:
        """{nodeid: [(mutant, invariant)]} as the scenarios declare them (collected once)."""
        if self._catches is None:
            self._catches = self._collect_catches()
        return self._catches

    def _collect_catches(self) -> dict[str, list[tuple[str, str | None]]]:
        self.work.mkdir(parents=True, exist_ok=True)
        listing = self.work / "catches.json"
        proc = self._pytest([self.scenarios, f"--jobquake-list-catches={listing}", "-q"], env={})
        if not listing.exists():
            raise ConfigError(f"could not list the scenarios in {self.scenarios}:\n{proc.stdout[-2000:]}")
        raw = json.loads(listing.read_text())
        unknown = {m for marks in raw.values() for m, _ in marks} - set(self.known)
        if unknown:
            raise ConfigError(f"scenarios declare unknown mutants {sorted(unknown)}", key="mutants")
        return {nodeid: [tuple(m) for m in marks] for nodeid, marks in raw.items()}

    def _pytest(self, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args, *self.extra_args]
        with subprocess.Popen(cmd, cwd=self.root, env={**os.environ, **env}, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) as proc:
            self._children.add(proc)
            try:
                out, err = proc.communicate()
            finally:
                self._children.discard(proc)
        return subprocess.CompletedProcess(cmd, proc.returncode, out, err)

    def stop_children(self) -> None:
        """Pass a stop on to every pytest run in progress: each stops its own stack and cleans up."""
        for proc in list(self._children):
            proc.terminate()

    def in_parallel(self, run: Callable[[T], Outcome], items: Iterable[T], jobs: int | None = None) -> list[Outcome]:
        """``run`` over ``items``, ``jobs`` (default: the matrix's) at once, started in order, results in order.

        A stop signal starts no more runs and passes the stop on to those in progress.
        """
        with ThreadPoolExecutor(max_workers=jobs or self.jobs) as pool:
            try:
                futures = [pool.submit(run, item) for item in items]
                return [future.result() for future in futures]
            except BaseException:  # a stop signal: end the runs in progress, start no more
                pool.shutdown(wait=False, cancel_futures=True)
                self.stop_children()
                raise

    def run_one(self, mutant: str | None, nodeids: list[str], extra_env: dict[str, str] | None = None,
                label: str | None = None, args: Iterable[str] = ()) -> Outcome:
        """One pytest session of ``nodeids`` with ``mutant`` on; its artifacts in ``label`` (default: the mutant).

        ``args``: more pytest arguments (a plugin to load, its options)."""
        artifacts = self.work / (label or mutant or "none")
        env = {**({self.config.mutant_env: mutant} if mutant else {}), **(extra_env or {})}
        started = time.monotonic()
        proc = self._pytest([*nodeids, f"--jobquake-artifacts={artifacts}", f"--jobquake-seed={self.config.seed}",
                             "-q", "-rfE", *args], env=env)
        outcome = Outcome(mutant, nodeids, proc.returncode, seconds=time.monotonic() - started)
        (artifacts).mkdir(parents=True, exist_ok=True)
        (artifacts / "pytest.out").write_text(proc.stdout + proc.stderr)
        report = through_latest(artifacts / "run.json")  # in the session's own folder
        if report.exists():
            for nodeid, verdict in json.loads(report.read_text()).get("tests", {}).items():
                outcome.violated[nodeid] = [r["name"] for r in verdict.get("results", []) if r.get("valid") is False]
        # "-rfE": one "FAILED nodeid - why" / "ERROR nodeid - why" line per test that did not pass
        for line in proc.stdout.splitlines():
            if line.startswith(("FAILED ", "ERROR ")) and len(line.split()) > 1:
                nodeid, _, why = line.split(maxsplit=1)[1].partition(" - ")
                outcome.why.setdefault(nodeid, why.strip())
        outcome.failed = sorted(outcome.why)
        return outcome

    def run(self, runner: Runner | None = None) -> tuple[Outcome, list[MutantResult]]:
        """The baseline and every mutant asked for against its declared scenarios; ``runner`` runs them
        (default ``run_each``; ``harness.mutation_plan.run_shared`` packs mutants into shared sessions)."""
        catches = self.catches()
        by_mutant: dict[str, list[tuple[str, str | None]]] = {name: [] for name in self.mutants}
        for nodeid, marks in catches.items():
            for mutant, invariant in marks:
                if mutant in by_mutant:  # else not among the mutants asked for
                    by_mutant[mutant].append((nodeid, invariant))
        declared = {name: sorted({n for n, _ in expected}) for name, expected in by_mutant.items() if expected}
        baseline, found = (runner or MutationMatrix.run_each)(self, declared, self.baseline_scenarios(declared))
        return baseline, [MutantResult(name, self.mutants[name], by_mutant[name], found.get(name))
                          for name in self.mutants]


    def narrowed(self) -> bool:
        """True when only some of the known mutants were asked for (``--only``)."""
        return set(self.mutants) != set(self.known)

    def baseline_scenarios(self, declared: dict[str, list[str]]) -> list[str]:
        """What the run with no mutant runs: the whole suite, or, when only some mutants were asked for,
        the scenarios they declare (a catch counts only where that scenario passes with no mutant; the
        rest of the suite is not this run's question, and `jobquake mutants` with every mutant runs it)."""
        if not self.narrowed():
            return list(self.catches())
        return sorted({nodeid for nodeids in declared.values() for nodeid in nodeids})

    def suite_or(self, nodeids: list[str]) -> list[str]:
        """What pytest is given to run ``nodeids``: the scenarios' folder when they are the whole suite."""
        return [self.scenarios] if set(nodeids) == set(self.catches()) else nodeids

    def run_each(self, declared: dict[str, list[str]],
                 scenarios: list[str]) -> tuple[Outcome, dict[str, Outcome]]:
        """The baseline (``scenarios``: the whole suite unless narrowed) and a session per mutant over its
        declared scenarios, all at once."""
        baseline_args = self.suite_or(scenarios)
        baseline, *outcomes = self.in_parallel(
            lambda name: self.run_one(name, declared[name] if name else baseline_args), [None, *declared])
        return baseline, dict(zip(declared, outcomes))


def baseline_failures(baseline: Outcome) -> list[str]:
    """What failed with no mutant, a line per scenario with the invariants it found invalid; none when all
    passed. The renderings end with it: a run's verdict is its log's tail, and a mutant caught by a
    scenario the app fails anyway is no catch."""
    if baseline.exit_code == 0:
        return []
    lines = ["", f"no mutant: FAILURES (exit {baseline.exit_code}): the app fails these without any mutant"]
    for nodeid in baseline.failed:
        invalid = baseline.violated.get(nodeid)
        lines.append(f"  {nodeid}: " + (f"invalid {', '.join(invalid)}" if invalid else
                                        baseline.why.get(nodeid) or "its own assertion or an error"))
    if not baseline.failed:
        lines.append("  no scenario failed: the session itself ended in error (its output is above)")
    return lines


def render(baseline: Outcome, results: list[MutantResult], narrowed: bool = False) -> list[str]:
    passing = f"the {len(baseline.nodeids)} scenarios they declare pass" if narrowed else "all scenarios pass"
    lines = [f"no mutant: {passing if baseline.exit_code == 0 else 'FAILURES (exit %d)' % baseline.exit_code}"
             f"  ({baseline.seconds:.0f}s)", ""]
    width = max(len(r.name) for r in results)
    for r in results:
        if r.outcome is None:
            lines.append(f"{r.name:<{width}}  SURVIVED  no scenario declares it")
            continue
        caught = r.caught_by
        what = "; ".join(f"{n.split('::')[-1]} by {inv}" for n, inv in caught) if caught else \
            "SURVIVED: " + "; ".join(f"{n.split('::')[-1]} flagged {r.outcome.violated.get(n) or 'nothing'}"
                                     for n, _ in r.expected)
        lines.append(f"{r.name:<{width}}  {'caught  ' if caught else 'SURVIVED'}  {what}  ({r.outcome.seconds:.0f}s)")
    caught = sum(r.caught for r in results)
    lines += ["", f"mutation score: {caught}/{len(results)} caught"]
    return lines + baseline_failures(baseline)


def to_json(baseline: Outcome, results: list[MutantResult]) -> dict[str, Any]:
    return {
        "baseline": asdict(baseline),
        "mutants": [{"name": r.name, "description": r.description, "caught": r.caught,
                     "caught_by": r.caught_by, "expected": r.expected,
                     "outcome": asdict(r.outcome) if r.outcome else None} for r in results],
        "score": {"caught": sum(r.caught for r in results), "total": len(results)},
    }


