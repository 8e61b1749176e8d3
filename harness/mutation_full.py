"""The full cross matrix: every scenario against every mutant, and what caught each.

``jobquake mutants`` runs, per mutant, only the scenarios that declare it:
it proves each scenario catches the bug it was written for. A user's own
scenarios will not be written around our bugs, so what protects them is the
invariants. ``jobquake mutants --full`` therefore runs the whole suite
against every mutant and, for each scenario that fails, tells apart

* a catch **by invariant**: an invariant of the harness was invalid in
  that scenario's verdict (named), and
* a catch **by assert** only: the scenario failed (its own ``assert``, an
  error) while every invariant it ran held.

A mutant is *caught by invariants* when at least one scenario caught it by
invariant. A scenario that fails without any mutant too (a flake, a load
the machine could not carry) is no catch, unless the mutant made an
invariant invalid that the run without it did not. Results that judge the run rather than the app (a fault that did
not land, settle timing out, work leaking between tests) are not catches by
invariant: they say the scenario could not be judged as written.

Not every pair runs: the baseline records which scenarios reach each
mutant's switch (``harness.mutation_reach``), and a mutant runs, in one
session, only with those. The baseline itself runs in a few sessions at
once, each over whole test files, since every mutant waits for it. A
skipped pair's result is the baseline's; it is reported as *not reached*
(counted, and listed in the JSON), and a mutant no scenario reaches is
``SURVIVED``. A scenario that declares a mutant always
runs with it: some paths are taken only with some timing (a heartbeat that
meets a database restart mid-write), and a baseline that missed one must not
skip the very scenario written to take it. An app that records no reach gets
every pair run.

With ``first_catch`` (``jobquake mutants --full --first-catch``, as PIT
runs by default) each mutant stops at its first catch by an invariant: its
scenarios run the declared ones first, then the rest, the shortest first,
and those after the catch are reported as *not run*. That answers whether
every mutant is caught by an invariant, not which invariants catch each.

Mutants share sessions where that is faithful (``harness.mutation_plan``):
at most ``jobs`` sessions each run several mutants' scenarios one mutant
after another, restarting the app's processes in between, so the fixed cost
of a session is paid a few times instead of once per mutant. A mutant whose
scenarios cost more than a quarter of a slot's share of the matrix runs in
parts (``PARTS_PER_SLOT``), each packed as a mutant of its own, and its row
joins them: the sessions started last are then short ones.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from harness.mutation import MutationMatrix, Outcome, baseline_failures
from harness.mutation_baseline import run_baseline, spans
from harness.mutation_plan import mutant_of, run_packed, shareable, split_into_parts
from harness.mutation_session import FirstCatch
from harness.mutation_reach import scenarios_reaching

# parts a slot's share of the matrix is cut into at most: the last sessions started are then short ones
PARTS_PER_SLOT = 4
# but a part is worth a few sessions' start and stop (``mutation_plan.SESSION_S``): a small matrix stays whole
MIN_PART_S = 60.0
# results about the run itself, not about the app: never a catch by invariant
NOT_APP_INVARIANTS = frozenset({"faults_landed", "settled_before_verdict", "no_work_from_earlier_tests",
                                "no_work_leaked_to_later_tests"})
ASSERT_ONLY = "assert"


@dataclass
class FullResult:
    """One mutant's row of the matrix: per failing scenario, the invariants that were invalid."""

    name: str
    description: str
    outcome: Outcome
    declared: list[tuple[str, str | None]] = field(default_factory=list)  # (scenario, invariant) it was written for
    baseline: Outcome | None = None  # the run with no mutant: what fails there is no catch
    not_reached: list[str] = field(default_factory=list)  # scenarios skipped: the baseline never reached it
    suite: int = 0  # scenarios in the suite: those run are the others

    @property
    def pairs_run(self) -> int:
        return self.suite - len(self.not_reached) - len(self.outcome.not_run)

    @property
    def declared_caught(self) -> bool:
        """A scenario written for this mutant failed with the invariant it names (as ``jobquake mutants`` asks)."""
        return any(inv in self.outcome.violated.get(nodeid, []) for nodeid, inv in self.declared)

    @property
    def failures(self) -> dict[str, list[str]]:
        """{nodeid: invalid app invariants ([] = only the scenario's own assert)} of failing scenarios."""
        out = self.outcome
        failing = set(out.failed) | {n for n, names in out.violated.items() if names}
        found = {nodeid: sorted(set(out.violated.get(nodeid, [])) - NOT_APP_INVARIANTS) for nodeid in sorted(failing)}
        return {nodeid: names for nodeid, names in found.items() if not self._fails_anyway(nodeid, names)}

    def _fails_anyway(self, nodeid: str, names: list[str]) -> bool:
        """The scenario failed without the mutant too, and the mutant added no invalid invariant."""
        base = self.baseline
        if base is None or nodeid not in set(base.failed) | {n for n, v in base.violated.items() if v}:
            return False
        return set(names) <= set(base.violated.get(nodeid, []))

    @property
    def caught(self) -> bool:
        return bool(self.failures)

    @property
    def caught_by_invariant(self) -> bool:
        return any(self.failures.values())

    @property
    def invariants(self) -> list[str]:
        """Every invariant that caught this mutant in some scenario."""
        return sorted({name for names in self.failures.values() for name in names})


def run_full(matrix: MutationMatrix, shared: bool = True,
             first_catch: bool = False) -> tuple[Outcome, list[FullResult]]:
    """The baseline (recording reach), then each mutant against the scenarios that reach it (``matrix.jobs``
    sessions at once; with ``shared``, mutants that may share a session do: ``harness.mutation_plan``);
    with ``first_catch``, each mutant only until its first catch by an invariant."""
    declared: dict[str, list[tuple[str, str | None]]] = {}
    catches = matrix.catches()
    for nodeid, marks in catches.items():
        for mutant, invariant in marks:
            declared.setdefault(mutant, []).append((nodeid, invariant))
    baseline, reach = run_baseline(matrix, list(catches))
    # None: the app records no reach; earlier baselines' reach counts too (timing decides some paths)
    selected = scenarios_reaching(reach, list(catches), matrix.mutants, matrix.work / "reach-history.json")
    if selected is not None:  # a scenario written for a mutant runs with it, whatever this baseline's timing reached
        selected = {name: sorted({*nodeids, *(n for n, _ in declared.get(name, []))})
                    for name, nodeids in selected.items()}
    took = spans(reach)
    rule = None
    if first_catch:
        rule = FirstCatch({n: sorted(v) for n, v in baseline.violated.items() if v}, sorted(NOT_APP_INVARIANTS))
        if selected is None:
            selected = {name: list(catches) for name in matrix.mutants}
        selected = {name: catch_order(nodeids, [n for n, _ in declared.get(name, [])], took)
                    for name, nodeids in selected.items()}

    sharing = shareable(matrix, reach) if shared else set()
    runs = selected  # what each session runs: mutants, or parts of them (a mutant stopping at its first catch is one)
    if selected is not None and rule is None:
        total = sum(took.get(n, 0.0) for nodeids in selected.values() for n in nodeids)
        runs = split_into_parts(selected, took, max(MIN_PART_S, total / (matrix.jobs * PARTS_PER_SLOT)))
        sharing = {key for key in runs if mutant_of(key) in sharing}

    def cost(key: str) -> float:  # the baseline's seconds for a run's scenarios: the longest start first
        return baseline.seconds if runs is None else sum(took.get(n, 0.0) for n in runs[key])

    found = _run_mutants(matrix, runs, sharing, cost, rule)
    return baseline, [FullResult(name, matrix.mutants[name], found[name], declared.get(name, []), baseline,
                                 [] if selected is None else sorted(set(catches) - set(selected[name])), len(catches))
                      for name in matrix.mutants]


def catch_order(nodeids: list[str], declared: list[str], took: dict[str, float]) -> list[str]:
    """A mutant's scenarios in the order most likely to catch it soonest: the ones written for it first,
    then the rest, the shortest in the baseline first."""
    mine = set(declared)
    written = [n for n in nodeids if n in mine]
    rest = sorted((n for n in nodeids if n not in mine), key=lambda n: (took.get(n, float("inf")), n))
    return written + rest


def _run_mutants(matrix: MutationMatrix, selected: dict[str, list[str]] | None, shareable: set[str],
                 cost: Callable[[str], float], first_catch: FirstCatch | None = None) -> dict[str, Outcome]:
    """Each mutant's outcome over its selected scenarios (None: the whole suite, a session each), the
    costliest sessions started first."""
    if selected is None:
        order = sorted(matrix.mutants, key=cost, reverse=True)
        return dict(zip(order, matrix.in_parallel(lambda name: matrix.run_one(name, [matrix.scenarios]), order)))
    return run_packed(matrix, selected, shareable, cost, first_catch)


def _short(nodeid: str) -> str:
    return nodeid.split("::")[-1]


def _row(r: FullResult, width: int) -> str:
    failures = r.failures
    if not r.outcome.nodeids:
        return f"{r.name:<{width}}  SURVIVED  not reached: no scenario gets to its switch"
    took = f"({r.pairs_run}/{r.suite} scenarios reach it, {r.outcome.seconds:.0f}s)" if r.not_reached else \
        f"({r.outcome.seconds:.0f}s)"
    if r.outcome.not_run:
        took = f"({r.pairs_run}/{r.suite} run to its first catch, {r.outcome.seconds:.0f}s)"
    if not failures:
        return f"{r.name:<{width}}  SURVIVED  every scenario passed  {took}"
    verdict = "caught  " if r.caught_by_invariant else "ASSERT  "
    what = "; ".join(f"{_short(n)} by {', '.join(names) if names else ASSERT_ONLY + ' only'}"
                     for n, names in failures.items())
    return f"{r.name:<{width}}  {verdict}  {len(failures)} scenario(s): {what}  {took}"


def render_full(baseline: Outcome, results: list[FullResult], wall: float | None = None) -> list[str]:
    """The matrix for a person: one row per mutant, then the score."""
    passed = baseline.exit_code == 0
    lines = [f"no mutant: {'all scenarios pass' if passed else 'FAILURES (exit %d): %s' % (baseline.exit_code, ', '.join(map(_short, baseline.failed)))}"
             f"  ({baseline.seconds:.0f}s)", ""]
    width = max((len(r.name) for r in results), default=0)
    lines += [_row(r, width) for r in results]
    counts: dict[str, int] = {}
    for r in results:
        for name in r.invariants:
            counts[name] = counts.get(name, 0) + 1
    if counts:
        lines += ["", "mutants caught per invariant: " + ", ".join(
            f"{name} {n}" for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))]
    caught = sum(r.caught for r in results)
    by_invariant = sum(r.caught_by_invariant for r in results)
    took = f"  in {wall:.0f}s" if wall is not None else ""
    declared = [r for r in results if r.declared]
    lost = [r.name for r in declared if not r.declared_caught]
    lines += ["", f"declared catches: {len(declared) - len(lost)}/{len(declared)} mutants caught by the scenario "
                  f"and invariant written for them" + (f" (not: {', '.join(lost)})" if lost else "")]
    skipped, run = _pairs(results)
    lines += [f"pairs: {run} run, {skipped} not reached (the scenario never gets to the mutant's switch "
              f"in the baseline: its result is the baseline's)"]
    after = sum(len(r.outcome.not_run) for r in results)
    if after:
        lines += [f"first catch: {after} pairs not run, their mutant caught already (`--full` without "
                  f"`--first-catch` runs them: which invariants catch each)"]
    lines += [f"mutation score: {caught}/{len(results)} caught, "
                  f"{by_invariant}/{len(results)} caught by invariants{took}"]
    return lines + baseline_failures(baseline)


def _pairs(results: list[FullResult]) -> tuple[int, int]:
    """(pairs skipped as not reached, pairs run) of (scenario, mutant)."""
    return sum(len(r.not_reached) for r in results), sum(r.pairs_run for r in results)


def full_to_json(baseline: Outcome, results: list[FullResult], wall: float | None = None) -> dict[str, Any]:
    """The matrix as data: per mutant, per failing scenario, the invariants ([] = assert only)."""
    return {
        "full": True,
        "wall_seconds": wall,
        "pairs": dict(zip(("not_reached", "run"), _pairs(results))),
        "not_reached": {r.name: r.not_reached for r in results},
        "not_run_after_first_catch": {r.name: r.outcome.not_run for r in results if r.outcome.not_run},
        "baseline": asdict(baseline),
        "matrix": {r.name: r.failures for r in results},
        "mutants": [{"name": r.name, "description": r.description, "caught": r.caught,
                     "caught_by_invariant": r.caught_by_invariant, "invariants": r.invariants,
                     "declared": r.declared, "declared_caught": r.declared_caught,
                     "failures": r.failures, "outcome": asdict(r.outcome)} for r in results],
        "score": {"caught": sum(r.caught for r in results),
                  "caught_by_invariants": sum(r.caught_by_invariant for r in results),
                  "total": len(results)},
    }
