"""Planted bugs in realistic runs are found by the checker meant for them, and only by it."""
from __future__ import annotations

import pytest

from harness.checks import ALL_CHECKERS, run_checks
from harness.checks.generic import GENERIC_INVARIANTS, applicable
from harness.history.synthetic import DEADLINE, synthetic_run

OPTIONS = {"timeout_labelled": {"deadline": DEADLINE}, "deadline_honoured": {"deadline": DEADLINE}}

CAUGHT_BY = {
    "double_billing": {"no_double_billing"},
    "stuck": {"every_job_terminal", "no_lost_submission"},
    "lost": {"no_lost_submission", "status_events_consistent"},
    "mislabelled": {"timeout_labelled"},
    "dead_write": {"no_effect_from_dead_attempt"},  # written before the retry started: no overlap
}


# the generic invariants run where the run holds their evidence (declared limits, saved results, the
# writing attempt), as in a session: those whose evidence the synthetic run lacks are left out
GLOBAL_CHECKERS = [checker for checker in ALL_CHECKERS if checker not in GENERIC_INVARIANTS]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_correct_run_passes_every_checker(seed):
    history, snapshot = synthetic_run(jobs=40, seed=seed)
    checkers = GLOBAL_CHECKERS + applicable(history, snapshot)
    verdict = run_checks(checkers, history, snapshot, OPTIONS)
    assert verdict.valid is True, [r.message for r in verdict.results if r.valid is not True]


def test_a_generic_invariant_left_out_for_want_of_evidence_is_unknown_when_asked():
    history, snapshot = synthetic_run(jobs=40, seed=0)
    left_out = [checker for checker in GENERIC_INVARIANTS if checker not in applicable(history, snapshot)]
    verdict = run_checks(left_out, history, snapshot, OPTIONS)
    assert verdict.results and all(r.valid == "unknown" for r in verdict.results), verdict.results


@pytest.mark.parametrize("bug", sorted(CAUGHT_BY))
def test_each_planted_bug_is_caught_by_its_checkers(bug):
    history, snapshot = synthetic_run(jobs=40, seed=5, bugs=[bug])
    verdict = run_checks(ALL_CHECKERS, history, snapshot, OPTIONS)
    assert {r.name for r in verdict.invalid()} == CAUGHT_BY[bug]
