"""Invariant checkers: pure functions of a history and a final DB snapshot.

Public API:

* ``Snapshot(jobs, taken_at_wall, terminal_states, extra)``, ``JobRow`` (from ``harness.evidence``).
* ``Result(name, valid, message, counterexample, details, timeline)``,
  ``Verdict(results)`` with ``valid`` merged, ``UNKNOWN``, ``merge_valid`` (``result.py``).
* A checker: ``check(history, snapshot, **options) -> Result``, declared with
  ``@invariant(name, needs=(PAID_CALLS, ...))`` (the evidence it needs, ``needs.py``).
  ``run_checks(checkers, history, snapshot, options={name: {...}}) -> Verdict``
  runs them; missing evidence, or a checker that raises, gives ``unknown`` (``runner.py``).
* ``faults_landed``: every injected fault shows in the app's evidence that it took
  effect (``landed.py``); the plugin runs it whenever a scenario injects a fault.
* The shipped checkers (one module each) and ``GLOBAL_INVARIANTS``,
  ``ALL_CHECKERS``, ``CHECKERS`` (by name), ``checkers_by_name``, ``evidence(name)``
  (what each invariant reads, ``registry.py``).
* ``format_failure(verdict, artifacts_path, seed, nodeid=None) -> str``,
  ``violation_error(verdict, artifacts_path, seed, nodeid=None, unknown_fails=False)`` ->
  ``InvariantViolation`` / ``InvariantUnknown`` | ``ExceptionGroup`` | None (``failure.py``).

How the pytest plugin uses it after each scenario::

    verdict = run_checks(GLOBAL_INVARIANTS + extra, recorder.events(), snapshot, options)
    error = violation_error(verdict, artifacts_dir, seed, nodeid)
    if error is not None:
        raise error      # its message is format_failure's text for that invariant
"""
from __future__ import annotations

from harness.checks.billing import no_double_billing
from harness.checks.budgets import effective_budget, query_budget
from harness.checks.connections import connections_returned
from harness.checks.dead_attempts import no_effect_from_dead_attempt
from harness.checks.deadline import deadline_honoured
from harness.checks.done_steps import no_paid_call_for_done_step
from harness.checks.end_to_end import end_to_end_deadline
from harness.checks.failure import InvariantUnknown, InvariantViolation, format_failure, violation_error
from harness.checks.interference import no_interference
from harness.checks.landed import faults_landed
from harness.checks.live_attempts import no_live_attempt_taken
from harness.checks.time_limits import soft_limit_honoured
from harness.checks.nesting import limits_nest
from harness.checks.overlap import no_overlapping_attempts
from harness.checks.provenance import results_have_provenance
from harness.checks.reasons import reasons_match_evidence
from harness.checks.recovery import recovers_within_bound
from harness.checks.refused import refused_submission_leaves_nothing
from harness.checks.retries import retries_keep_spacing_and_budget
from harness.checks.registry import ALL_CHECKERS, CHECKERS, GLOBAL_INVARIANTS, checkers_by_name
from harness.checks.result import UNKNOWN, Result, Verdict, merge_valid
from harness.checks.runner import Checker, checker_name, invariant, run_checks
from harness.checks.status_events import status_events_consistent
from harness.checks.submissions import no_lost_submission
from harness.checks.sweep import sweep_complete
from harness.checks.terminal import every_job_terminal
from harness.checks.terminal_final import terminal_is_final
from harness.checks.timeouts import timeout_labelled
from harness.checks.uploads import no_upload_billed_twice
from harness.checks.upload_jobs import each_upload_its_own_job
from harness.checks.writer_attempt import writes_by_current_attempt
from harness.checks.streams import streams_agree_with_db
from harness.checks.sweep_coverage import sweeps_cover_predicate
from harness.checks.work import work_per_item
from harness.evidence import JobRow, Snapshot

__all__ = [
    "ALL_CHECKERS", "CHECKERS", "GLOBAL_INVARIANTS", "UNKNOWN",
    "Checker", "InvariantUnknown", "InvariantViolation", "JobRow", "Result", "Snapshot", "Verdict",
    "checker_name", "checkers_by_name", "format_failure", "invariant", "merge_valid", "run_checks",
    "violation_error",
    # every shipped checker (ALL_CHECKERS), by its name
    "deadline_honoured", "effective_budget", "every_job_terminal", "faults_landed", "no_double_billing",
    "no_effect_from_dead_attempt", "no_lost_submission", "no_overlapping_attempts",
    "no_paid_call_for_done_step", "no_upload_billed_twice", "query_budget", "status_events_consistent",
    "sweep_complete", "terminal_is_final", "timeout_labelled",
    "end_to_end_deadline", "limits_nest", "reasons_match_evidence", "results_have_provenance",
    "writes_by_current_attempt",
    "each_upload_its_own_job",
    "no_live_attempt_taken",
    "soft_limit_honoured",
    "no_interference",
    "connections_returned",
    "refused_submission_leaves_nothing",
    "retries_keep_spacing_and_budget",
    "recovers_within_bound",
    "streams_agree_with_db",
    "sweeps_cover_predicate",
    "work_per_item",
]
