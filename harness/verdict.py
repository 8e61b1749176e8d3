"""One place that turns a finished run into its verdict.

For each scenario, in this order::

    heal the faults -> settle -> collect the evidence -> judge -> keep tests apart -> write the artifacts

- **heal**: every fault injected is healed first (Jepsen's final generator);
- **settle**: wait until nothing can still cause work (unless the scenario
  says otherwise); a settle that times out is a result of its own;
- **collect**: ``harness.evidence.collect`` reads every source of evidence
  into the history and takes the final snapshot;
- **judge**: the scenario's checkers, ``faults_landed`` when it injected a
  fault, and the generic invariants its evidence switches on
  (``harness.checks``);
- **keep tests apart**: work of an earlier test seen in this one fails both
  (``harness.leaks``); after the verdict, what the test left is removed
  before the next one (``harness.isolation``);
- **write**: history, snapshot, verdict and timeline in the run's artifacts
  (``harness.report``).

``Verdicts`` lives as long as the pytest process (the session makes one): it
keeps every test's verdict and which test created each job. The session
calls ``judge`` after the scenario's body (a ``Judgement``: the verdict and
the exception that fails the test, if any) and ``finish`` when its ``jq``
fixture is torn down; everything else about pytest stays in the session.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

from harness.checks import Result, Verdict, run_checks, violation_error
from harness.checks.failure import format_result
from harness.checks.generic import applicable, decided
from harness.checks.landed import faults_landed
from harness.checks.runner import checker_name
from harness.errors import HarnessError, SettleTimeout
from harness.evidence.collect import collect, save_logs
from harness.history.history import History
from harness.isolation import isolate
from harness.leaks import Apart, apart_from_earlier, leaked_to_later
from harness.markers import ScenarioOptions
from harness.pending.verdict import settle_result
from harness.report import write_artifacts
from harness.run import Run


class UnknownVerdictWarning(UserWarning):
    """An invariant could not be decided and ``on_unknown = "warn"`` lets its test pass."""


class ScenarioError(HarnessError):
    """A scenario that cannot be judged as written (e.g. it runs no checker)."""


@dataclass(frozen=True)
class Judgement:
    """A run's verdict, and the exception that fails its test (None when the test passes)."""

    verdict: Verdict
    error: BaseException | None


class Verdicts:
    """Every test's verdict in one pytest process, and the judging of each run."""

    def __init__(self, *, seed: int, on_unknown: str = "fail"):
        self.seed = seed
        self.on_unknown = on_unknown
        self.by_test: dict[str, Verdict] = {}
        self._created_by: dict[str, str] = {}  # job id -> the test that created it (leak reports)

    def judge(self, run: Run, nodeid: str, opts: ScenarioOptions, *, settle: bool) -> Judgement:
        """Heal, settle (when ``settle`` and the scenario allows), collect, judge, write."""
        run.faults.heal_all(before_verdict=True)
        if settle and opts.settle is not False:
            try:
                run.settle(opts.settle if not isinstance(opts.settle, bool) else None)
            except SettleTimeout:
                pass  # a result of the verdict (settled_before_verdict), with what was pending
        if opts.expect:
            run.record.expected(**opts.expect)
        history, snapshot = collect(run)
        apart = apart_from_earlier(history, self._created_by)
        verdict = self._checked(nodeid, apart.judged, snapshot, opts, landing=bool(run.faults.injected))
        verdict = self._apart(nodeid, verdict, apart, settle_result(run.settle_outcome))
        self._created_by.update(dict.fromkeys(apart.created, nodeid))
        self.by_test[nodeid] = verdict
        write_artifacts(run.artifacts, history, snapshot, verdict, title=nodeid, seed=self.seed, nodeid=nodeid)
        return Judgement(verdict, self._error(verdict, run, nodeid))

    def _error(self, verdict: Verdict, run: Run, nodeid: str) -> BaseException | None:
        """The exception that fails the test (None when it passes); ``unknown`` warns when it may pass."""
        unknown_fails = self.on_unknown == "fail"
        if not unknown_fails:
            for result in verdict.unknown():
                warnings.warn(UnknownVerdictWarning("\n".join(format_result(result))), stacklevel=4)
        return violation_error(verdict, str(run.artifacts), self.seed, nodeid, unknown_fails=unknown_fails)

    def finish(self, run: Run) -> None:
        """At teardown: heal, remove what the test left for the next one, save the logs, close the run."""
        run.faults.heal_all()
        try:
            isolate(run, run.settler.read_all())  # nothing of this test may reach the next one
        finally:
            save_logs(run)
            run.close()

    @staticmethod
    def _checked(nodeid: str, history: History, snapshot: Any, opts: ScenarioOptions, *,
                 landing: bool) -> Verdict:
        """The scenario's checkers (each fault must land), then the generic invariants its evidence allows."""
        checkers = opts.checkers() + ([faults_landed] if landing else [])
        if not checkers:
            raise ScenarioError(f"{nodeid} runs no checker: nothing would be judged")
        generic = applicable(history, snapshot, skip=opts.skip_checks, already=map(checker_name, checkers))
        verdict = run_checks(checkers + generic, history, snapshot, opts.options)
        return Verdict(tuple(decided(verdict.results, generic)), verdict.options)

    def _apart(self, nodeid: str, verdict: Verdict, apart: Apart, unsettled: Result | None) -> Verdict:
        """Add what keeps tests apart: a settle that timed out, work leaked from earlier tests
        (also recorded as a failure of the test it leaked from)."""
        leaks = apart.result
        extra = tuple(r for r in (unsettled, leaks) if r is not None and r.valid is False)
        for origin in leaks.details.get("leaked_from", []) if leaks.valid is False else []:
            if origin in self.by_test:
                earlier = self.by_test[origin]
                self.by_test[origin] = Verdict(earlier.results + (leaked_to_later(nodeid, leaks),), earlier.options)
        return Verdict(verdict.results + extra, verdict.options) if extra else verdict
