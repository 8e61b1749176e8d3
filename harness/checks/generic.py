"""The invariants that hold for any job system and run wherever their evidence exists.

The global invariants (every job terminal, no double billing, no lost
submission) run after every scenario. These run after every scenario too,
but only where the run produced the evidence they need: an app that saves
no step results is not judged on their provenance, an app that declares
no limits not on their nesting. Asked for by name
(``@pytest.mark.jobquake(checks=[...])``) they run always, and without
their evidence say ``unknown``; switched on here by their evidence, an
``unknown`` (evidence present, nothing to judge) is left out of the
verdict rather than failing a scenario that never asked.
"""
from __future__ import annotations

from typing import Iterable

from harness.checks.budgets import query_budget
from harness.checks.connections import CONNECTIONS, connections_returned
from harness.checks.recovery import BOUNDS, recovers_within_bound
from harness.checks.refused import REFUSALS, refused_submission_leaves_nothing
from harness.checks.retries import RETRIED, retries_keep_spacing_and_budget
from harness.checks.terminal_final import FINAL_STATES, terminal_is_final
from harness.checks.end_to_end import STEP_BOUND, end_to_end_deadline
from harness.checks.live_attempts import HEARTBEATS, STALE_AFTER, no_live_attempt_taken
from harness.checks.needs import JOBS, PAID_CALLS, STATE_CHANGES, Missing, Need
from harness.checks.nesting import LIMIT_CHAINS, limits_nest
from harness.checks.provenance import SAVED_RESULTS, results_have_provenance
from harness.checks.reasons import QUOTED_ATTEMPTS, reasons_match_evidence
from harness.checks.result import Result
from harness.checks.time_limits import WORKER_LOGS, soft_limit_honoured
from harness.checks.runner import Checker, checker_name
from harness.evidence import Snapshot
from harness.checks.writer_attempt import WRITERS, writes_by_current_attempt
from harness.checks.interference import CONTROL_STATE, no_interference
from harness.checks.upload_jobs import UPLOADS, each_upload_its_own_job
from harness.checks.streams import STREAMS, streams_agree_with_db
from harness.checks.sweep_coverage import SWEEP_PREDICATE, SWEEP_RUNS, sweeps_cover_predicate
from harness.checks.work import ITEM_BUDGETS, WORK_SAMPLES, work_per_item
from harness.history import vocabulary as v
from harness.history.history import History


def _scans(history: History, snapshot: Snapshot | None) -> Missing | None:
    return None if history.by_source(v.QUERY, name=v.SCAN) else Missing("no query scan was recorded")


SCANS = Need("query_scans", "table scans counted for a batch of items", _scans)

# each invariant, with the evidence that switches it on
WHERE_EVIDENCE: tuple[tuple[Checker, tuple[Need, ...]], ...] = (
    (results_have_provenance, (SAVED_RESULTS, PAID_CALLS)),
    (end_to_end_deadline, (STEP_BOUND, PAID_CALLS)),
    (limits_nest, (LIMIT_CHAINS,)),
    (writes_by_current_attempt, (WRITERS,)),
    (reasons_match_evidence, (QUOTED_ATTEMPTS,)),
    (query_budget, (SCANS,)),
    (each_upload_its_own_job, (UPLOADS,)),
    (no_live_attempt_taken, (HEARTBEATS, STALE_AFTER)),
    (soft_limit_honoured, (WORKER_LOGS,)),
    (no_interference, (CONTROL_STATE,)),
    (connections_returned, (CONNECTIONS,)),
    (terminal_is_final, (FINAL_STATES,)),
    (refused_submission_leaves_nothing, (REFUSALS,)),
    (retries_keep_spacing_and_budget, (RETRIED,)),
    (recovers_within_bound, (BOUNDS,)),
    (streams_agree_with_db, (STREAMS, STATE_CHANGES, JOBS)),
    (sweeps_cover_predicate, (SWEEP_PREDICATE, SWEEP_RUNS)),
    (work_per_item, (WORK_SAMPLES, ITEM_BUDGETS)),
)
GENERIC_INVARIANTS: tuple[Checker, ...] = tuple(checker for checker, _ in WHERE_EVIDENCE)


def applicable(history: History, snapshot: Snapshot | None, *, skip: Iterable[str] = (),
               already: Iterable[str] = ()) -> list[Checker]:
    """The generic invariants whose evidence this run has, minus those skipped or already chosen."""
    left_out = set(skip) | set(already)
    return [checker for checker, needs in WHERE_EVIDENCE
            if checker_name(checker) not in left_out
            and all(need.missing(history, snapshot) is None for need in needs)]


def decided(results: Iterable[Result], switched_on: Iterable[Checker]) -> list[Result]:
    """``results`` without the ``unknown`` ones of invariants only their evidence switched on."""
    auto = {checker_name(c) for c in switched_on}
    return [r for r in results if not (r.name in auto and r.valid is not True and r.valid is not False)]
