"""The generic invariants on constructed histories: valid, invalid, and unknown without their evidence."""
from __future__ import annotations

from harness.checks import UNKNOWN, run_checks
from harness.checks.end_to_end import end_to_end_deadline
from harness.history.vocabulary import LIMITS
from harness.checks.generic import GENERIC_INVARIANTS, applicable, decided
from harness.checks.nesting import limits_nest
from harness.checks.provenance import results_have_provenance
from harness.checks.reasons import reasons_match_evidence
from harness.checks.result import Result
from harness.checks.runner import checker_name
from harness.checks.writer_attempt import writes_by_current_attempt
from harness.history import vocabulary as v
from harness.history.builder import HistoryBuilder
from harness.history.event import OK


def verdict(checker, b: HistoryBuilder, **options) -> Result:
    """One checker through run_checks, so missing evidence gives unknown as in a scenario."""
    name = checker_name(checker)
    return run_checks([checker], b.history(), b.snapshot(), {name: options})[name]


def change(b: HistoryBuilder, job: str, t: float, state: str, attempt: int, writer: int | None,
           reason: str | None = None, log_id: int = 0) -> None:
    """A state-log row: the row's attempt after the change, and the attempt that made it."""
    data = {"state": state, "reason": reason, "attempt": attempt, "log_id": log_id}
    if writer is not None:
        data["writer_attempt"] = writer
    b.event(v.JOB, OK, v.STATE, t, job, attempt, **data)


def saved(b: HistoryBuilder, job: str, step: str, t: float, call_id: str | None, attempt: int = 1) -> None:
    b.event(v.WRITE, OK, v.STEP_SAVED, t, job, attempt, step=step, call_id=call_id, table="results",
            refused=False)


def limits(b: HistoryBuilder, chains=None, step_blocked=None, attempt_blocked=None) -> None:
    b.event(v.BUDGET, OK, LIMITS, 0.0, chains=chains or {}, step_blocked=step_blocked,
            attempt_blocked=attempt_blocked)


# -- writes by the current attempt ------------------------------------------------------------
def two_attempts(late_writer: int) -> HistoryBuilder:
    """Attempt 1 claims, is replaced by attempt 2 (a claim), then a write arrives from ``late_writer``."""
    b = HistoryBuilder()
    change(b, "j1", 0.0, "queued", 0, None, log_id=1)
    change(b, "j1", 0.1, "running", 1, 1, log_id=2)
    change(b, "j1", 2.0, "running", 2, 1, log_id=3)  # a claim: the writer setting may lag, not judged
    change(b, "j1", 3.0, "done", 2, late_writer, log_id=4)
    b.row("j1", "done", attempt=2)
    return b


def test_writes_by_the_rows_attempt_are_valid():
    result = verdict(writes_by_current_attempt, two_attempts(late_writer=2))
    assert result.valid is True and result.details["judged"] == 1


def test_a_write_by_a_replaced_attempt_is_invalid():
    result = verdict(writes_by_current_attempt, two_attempts(late_writer=1))
    assert result.valid is False
    assert result.counterexample[0] | {"at": None} == {
        "job_id": "j1", "attempt": 1, "row_attempt": 2, "state": "done", "reason": None, "at": None, "log_id": 4}


def test_no_writer_named_is_unknown():
    b = HistoryBuilder()
    change(b, "j1", 0.1, "running", 1, None)
    change(b, "j1", 1.0, "done", 1, None)
    result = verdict(writes_by_current_attempt, b)
    assert result.valid == UNKNOWN and "names the attempt" in result.message


def test_only_claims_named_is_unknown():
    b = HistoryBuilder()
    change(b, "j1", 0.1, "running", 1, 1, log_id=1)
    assert verdict(writes_by_current_attempt, b).valid == UNKNOWN


# -- reasons match evidence -------------------------------------------------------------------
def test_an_attempt_count_equal_to_the_attempts_started_is_valid():
    b = HistoryBuilder()
    change(b, "j1", 1.0, "failed", 3, None, reason="error: gave up after 3 attempts (last: error: 503)")
    change(b, "j2", 1.0, "queued", 2, None, reason="timeout: attempt 2 ran past its 9s cap; released")
    assert verdict(reasons_match_evidence, b).valid is True


def test_a_count_the_history_does_not_show_is_invalid():
    b = HistoryBuilder()
    change(b, "j1", 1.0, "failed", 1, None, reason="error: gave up after 3 attempts (last: error: 503)")
    result = verdict(reasons_match_evidence, b)
    assert result.valid is False and "says 3 attempt(s) but 1 had started" in result.message


def test_naming_an_attempt_that_never_ran_is_invalid():
    b = HistoryBuilder()
    change(b, "j1", 1.0, "queued", 1, None, reason="timeout: attempt 2 ran past its cap")
    assert verdict(reasons_match_evidence, b).valid is False


def test_no_reason_quoting_attempts_is_unknown():
    b = HistoryBuilder()
    change(b, "j1", 1.0, "failed", 1, None, reason="error: provider returned 503")
    assert verdict(reasons_match_evidence, b).valid == UNKNOWN


def test_progress_of_a_job_without_paid_steps_is_not_judged():
    b = HistoryBuilder()
    change(b, "j1", 1.0, "failed", 1, None, reason="timeout: timed out after 2 of 5 rows")
    assert verdict(reasons_match_evidence, b).valid == UNKNOWN


# -- provenance -------------------------------------------------------------------------------
def two_jobs() -> tuple[HistoryBuilder, str, str]:
    b = HistoryBuilder()
    c1 = b.call("j1", 0.0, 0.5, step="s", key="k:j1:s")
    c2 = b.call("j2", 0.1, 0.6, step="s", key="k:j2:s")
    b.row("j1", "done")
    b.row("j2", "done")
    return b, c1, c2


def test_results_from_their_own_jobs_calls_are_valid():
    b, c1, c2 = two_jobs()
    saved(b, "j1", "s", 0.7, c1)
    saved(b, "j2", "s", 0.7, c2)
    result = verdict(results_have_provenance, b)
    assert result.valid is True and result.details["jobs"] == 2


def test_a_replay_of_the_jobs_own_key_is_valid():
    b, c1, c2 = two_jobs()
    replay = b.call("j1", 1.0, 1.1, attempt=2, step="s", key="k:j1:s", state="replayed", billed=False,
                    replay_of=c1)
    saved(b, "j1", "s", 1.2, replay, attempt=2)
    saved(b, "j2", "s", 0.7, c2)
    assert verdict(results_have_provenance, b).valid is True


def test_a_result_from_another_jobs_call_is_invalid():
    b, c1, c2 = two_jobs()
    saved(b, "j1", "s", 0.7, c1)
    saved(b, "j2", "s", 0.7, c1)  # j2 shows j1's answer
    result = verdict(results_have_provenance, b)
    assert result.valid is False
    assert result.counterexample[0]["job_id"] == "j2" and "made for job j1" in result.message


def test_a_replay_of_another_jobs_key_is_invalid():
    b, c1, _ = two_jobs()
    replay = b.call("j2", 1.0, 1.1, step="s", key="k:j1:s", state="replayed", billed=False, replay_of=c1)
    saved(b, "j1", "s", 0.7, c1)
    saved(b, "j2", "s", 1.2, replay)
    result = verdict(results_have_provenance, b)
    assert result.valid is False and "replays call" in result.message


def test_a_result_naming_an_unanswered_call_is_invalid():
    b = HistoryBuilder()
    c1 = b.call("j1", 0.0, 0.5, step="s", state="failed", status=503)
    saved(b, "j1", "s", 0.7, c1)
    b.row("j1", "done")
    assert verdict(results_have_provenance, b).valid is False


def test_no_saved_results_is_unknown():
    b, _, _ = two_jobs()
    result = verdict(results_have_provenance, b)
    assert result.valid == UNKNOWN and "results_query" in result.message


def test_results_of_jobs_not_done_are_unknown():
    b = HistoryBuilder()
    c1 = b.call("j1", 0.0, 0.5, step="s")
    saved(b, "j1", "s", 0.7, c1)
    b.row("j1", "failed")
    assert verdict(results_have_provenance, b).valid == UNKNOWN


# -- end-to-end deadline ------------------------------------------------------------------------
def retries_around_a_hang(calls: int, each: float) -> HistoryBuilder:
    """One step called ``calls`` times, each blocking ``each`` s before the app requeues."""
    b = HistoryBuilder()
    t = 0.0
    for attempt in range(1, calls + 1):
        b.call("j1", t, None if attempt == calls else t + 60.0, attempt=attempt, step="s", state="hung")
        change(b, "j1", t + each, "queued", attempt, None, reason="timeout")
        t += each + 0.2
    b.row("j1", "failed", attempt=calls)
    return b


def test_blocked_time_within_the_declared_bound_is_valid():
    b = retries_around_a_hang(3, 1.0)
    limits(b, step_blocked=3.0)
    result = verdict(end_to_end_deadline, b)
    assert result.valid is True and result.details["judged"] == 1


def test_many_deadlines_in_a_row_past_the_bound_are_invalid():
    b = retries_around_a_hang(6, 1.0)  # each call honours a 1 s deadline; six of them do not fit 3 s (+ slack)
    limits(b, step_blocked=3.0)
    result = verdict(end_to_end_deadline, b)
    assert result.valid is False
    assert result.counterexample[0]["calls"] == 6 and result.counterexample[0]["blocked_s"] > 5.9


def test_the_ledger_end_of_a_call_the_app_left_is_not_counted():
    b = retries_around_a_hang(1, 1.0)  # the hang heals at 60 s; the app moved on at 1 s
    limits(b, step_blocked=1.0)
    assert verdict(end_to_end_deadline, b).valid is True


def test_a_bound_option_overrides_the_declaration():
    b = retries_around_a_hang(3, 1.0)
    assert verdict(end_to_end_deadline, b, bound={"*": 1.0}).valid is False


def test_retries_inside_one_attempt_past_the_attempt_bound_are_invalid():
    b = HistoryBuilder()
    for i in range(3):  # one attempt, three calls for the same step, each cut at its 1 s deadline
        b.call("j1", i * 1.0, 60.0, attempt=1, step="s", state="hung")
    change(b, "j1", 3.0, "failed", 1, None, reason="timeout")
    limits(b, step_blocked=3.0, attempt_blocked=1.0)
    result = verdict(end_to_end_deadline, b)
    assert result.valid is False and result.counterexample[0]["scope"] == "attempt"
    assert "per attempt" in result.message


def test_a_call_whose_worker_was_killed_counts_only_until_the_kill():
    b = HistoryBuilder()
    b.call("j1", 0.0, 5.0, attempt=1, step="s")  # the provider finished for nobody at 5 s
    b.fault("kill_worker", 0.4, None)
    b.call("j1", 6.0, 6.5, attempt=2, step="s")
    limits(b, step_blocked=3.0, attempt_blocked=1.0)
    result = verdict(end_to_end_deadline, b)
    assert result.valid is True


def test_no_bound_is_unknown():
    assert verdict(end_to_end_deadline, retries_around_a_hang(3, 1.0)).valid == UNKNOWN


# -- limits nest --------------------------------------------------------------------------------
def test_nested_limits_are_valid():
    b = HistoryBuilder()
    limits(b, chains={"celery": [["call", 1.0], ["soft", 6.0], ["hard", 9.0], ["visibility", None]]})
    assert verdict(limits_nest, b).valid is True


def test_a_limit_not_below_the_next_is_invalid():
    b = HistoryBuilder()
    limits(b, chains={"sqs receives": [["code_attempts", 3], ["queue_max_receives", 3]]})
    result = verdict(limits_nest, b)
    assert result.valid is False and result.counterexample[0]["inner"] == "code_attempts"


def test_an_unlimited_layer_inside_a_limited_one_is_invalid():
    b = HistoryBuilder()
    limits(b, chains={"celery": [["call", None], ["soft", 6.0]]})
    assert verdict(limits_nest, b).valid is False


def test_no_declared_limits_is_unknown():
    assert verdict(limits_nest, HistoryBuilder()).valid == UNKNOWN


# -- switched on by their evidence --------------------------------------------------------------
def test_only_the_invariants_whose_evidence_exists_are_switched_on():
    b = two_attempts(late_writer=2)
    limits(b, chains={"c": [["a", 1.0], ["b", 2.0]]})
    names = [checker_name(c) for c in applicable(b.history(), b.snapshot())]
    assert names == ["limits_nest", "writes_by_current_attempt"]
    assert applicable(b.history(), b.snapshot(), skip=["limits_nest"], already=["writes_by_current_attempt"]) == []


def test_an_unknown_of_an_invariant_switched_on_by_evidence_is_left_out():
    switched = [c for c in GENERIC_INVARIANTS if checker_name(c) == "writes_by_current_attempt"]
    results = [Result("writes_by_current_attempt", UNKNOWN, "nothing judged"), Result("other", UNKNOWN, "x")]
    assert [r.name for r in decided(results, switched)] == ["other"]


# -- reasons: progress --------------------------------------------------------------------------
def soft_limit_mid_batch(said: int) -> HistoryBuilder:
    """Two documents answered, the third's call in flight when the batch budget fired at 3.0 s."""
    b = HistoryBuilder()
    for i in range(2):
        b.call("j1", i * 1.0, i * 1.0 + 0.9, step=f"doc-{i}")
    b.call("j1", 2.0, None, step="doc-2", state="in_flight")
    change(b, "j1", 3.0, "failed", 1, None, reason=f"timeout: timed out after {said} of 6 documents")
    return b


def test_progress_the_completed_calls_account_for_is_valid():
    assert verdict(reasons_match_evidence, soft_limit_mid_batch(said=2)).valid is True


def test_progress_counting_the_item_in_flight_is_invalid():
    result = verdict(reasons_match_evidence, soft_limit_mid_batch(said=3))
    assert result.valid is False and "only 2 step(s) had completed" in result.message


def sweep_run(reason: str) -> HistoryBuilder:
    b = HistoryBuilder()
    b.event(v.SWEEP, OK, v.SWEEP, 1.0, run_id=1, state="timed_out", reason=reason, eligible=[1, 2, 3],
            processed=[1, 3], failed=[2], unreached=[4, 5])
    return b


def test_sweep_progress_equal_to_the_rows_handled_is_valid():
    assert verdict(reasons_match_evidence, sweep_run("timeout: timed out after 3 of 5 invoices")).valid is True


def test_sweep_progress_leaving_out_failed_rows_is_invalid():
    result = verdict(reasons_match_evidence, sweep_run("timeout: timed out after 2 of 5 invoices"))
    assert result.valid is False and "3 of 5 handled" in result.message
    assert result.message.startswith("1 reason(s) disagree with the evidence; first: sweep run 1 (timed_out)")
