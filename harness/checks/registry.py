"""The shipped checkers, by name, and the set run after every scenario.

``GLOBAL_INVARIANTS`` hold for any job system and run automatically;
the others need a scenario that produces their evidence (a sweep, budget
events, query counts...) and are asked for by name.
"""
from __future__ import annotations

from typing import Iterable

from harness.checks.billing import no_double_billing
from harness.checks.budgets import effective_budget, query_budget
from harness.checks.dead_attempts import no_effect_from_dead_attempt
from harness.checks.done_steps import no_paid_call_for_done_step
from harness.checks.deadline import deadline_honoured
from harness.checks.landed import faults_landed
from harness.checks.overlap import no_overlapping_attempts
from harness.checks.needs import Need
from harness.checks.runner import Checker, checker_name, checker_needs
from harness.checks.status_events import status_events_consistent
from harness.checks.submissions import no_lost_submission
from harness.checks.sweep import sweep_complete
from harness.checks.terminal import every_job_terminal
from harness.checks.terminal_final import terminal_is_final
from harness.checks.timeouts import timeout_labelled
from harness.checks.uploads import no_upload_billed_twice
from harness.checks.upload_jobs import each_upload_its_own_job
from harness.checks.end_to_end import end_to_end_deadline
from harness.checks.nesting import limits_nest
from harness.checks.provenance import results_have_provenance
from harness.checks.reasons import reasons_match_evidence
from harness.checks.writer_attempt import writes_by_current_attempt
from harness.checks.live_attempts import no_live_attempt_taken
from harness.checks.time_limits import soft_limit_honoured
from harness.checks.interference import no_interference
from harness.checks.connections import connections_returned
from harness.checks.recovery import recovers_within_bound
from harness.checks.refused import refused_submission_leaves_nothing
from harness.checks.retries import retries_keep_spacing_and_budget
from harness.checks.streams import streams_agree_with_db
from harness.checks.sweep_coverage import sweeps_cover_predicate
from harness.checks.work import work_per_item

GLOBAL_INVARIANTS: tuple[Checker, ...] = (every_job_terminal, no_double_billing, no_lost_submission)

ALL_CHECKERS: tuple[Checker, ...] = (
    every_job_terminal,
    no_double_billing,
    no_lost_submission,
    timeout_labelled,
    deadline_honoured,
    sweep_complete,
    no_effect_from_dead_attempt,
    no_paid_call_for_done_step,
    no_upload_billed_twice,
    no_overlapping_attempts,
    status_events_consistent,
    effective_budget,
    query_budget,
    terminal_is_final,
    faults_landed,
    results_have_provenance,
    end_to_end_deadline,
    limits_nest,
    writes_by_current_attempt,
    reasons_match_evidence,
    each_upload_its_own_job,
    no_live_attempt_taken,
    soft_limit_honoured,
    no_interference,
    connections_returned,
    refused_submission_leaves_nothing,
    retries_keep_spacing_and_budget,
    recovers_within_bound,
    streams_agree_with_db,
    sweeps_cover_predicate,
    work_per_item,
)

CHECKERS: dict[str, Checker] = {checker_name(c): c for c in ALL_CHECKERS}


def checkers_by_name(names: Iterable[str]) -> list[Checker]:
    """The shipped checkers with these names; an unknown name raises KeyError naming the choices."""
    found = []
    for name in names:
        if name not in CHECKERS:
            raise KeyError(f"no checker named {name!r}; known: {', '.join(CHECKERS)}")
        found.append(CHECKERS[name])
    return found


def evidence(name: str) -> tuple[Need, ...]:
    """What the invariant ``name`` reads, as it declares it (each ``Need``: a name and a description), for
    the generated reference; KeyError naming the choices for an unknown name."""
    return checker_needs(checkers_by_name([name])[0])
