"""deadline_honoured: a job whose paid call went unanswered ends at the configured deadline."""
from __future__ import annotations

from harness.checks.deadline import deadline_honoured
from harness.checks.registry import CHECKERS
from harness.history.builder import HistoryBuilder
from harness.history.synthetic import DEADLINE as SYNTHETIC_DEADLINE
from harness.history.synthetic import synthetic_run

DEADLINE = 1.0
SLACK = 0.15


def unanswered_call(ended_after: float | None, reason: str | None = "timeout: model call exceeded 1s",
                    call_state: str = "hung") -> HistoryBuilder:
    """One job whose only paid call starts at t=1 and hangs; the job fails ``ended_after`` later."""
    b = HistoryBuilder()
    b.fault("hang_endpoint", 0.0, 5.0, layer="provider")
    b.state("j1", 0.5, "running", attempt=1)
    b.call("j1", 1.0, None, attempt=1, state=call_state, status=None, client_gone=True)
    if ended_after is None:
        b.row("j1", "running")
    else:
        b.state("j1", 1.0 + ended_after, "failed", attempt=1, reason=reason)
        b.row("j1", "failed", reason=reason, updated=1.0 + ended_after)
    return b


def check(b: HistoryBuilder, **options):
    options = {"deadline": DEADLINE, "slack": SLACK, **options}
    return deadline_honoured(b.history(), b.snapshot(), **options)


def test_registered_by_name():
    assert CHECKERS["deadline_honoured"] is deadline_honoured


def test_job_that_ends_at_the_deadline_is_valid():
    result = check(unanswered_call(1.04))
    assert result.valid is True
    assert result.details["judged"] == 1


def test_job_that_ends_at_the_table_default_instead_is_invalid():
    result = check(unanswered_call(1.2))
    assert result.valid is False
    example = result.counterexample[0]
    assert example["job_id"] == "j1" and example["ended_after_s"] == 1.2
    assert "late" in example["why"]


def test_job_that_ends_before_the_deadline_is_invalid():
    result = check(unanswered_call(0.5))
    assert result.valid is False and "early" in result.counterexample[0]["why"]


def test_job_that_never_ends_is_invalid():
    result = check(unanswered_call(None))
    assert result.valid is False
    assert result.counterexample[0]["ended_after_s"] is None and "stopped waiting" in result.message


def test_healed_hang_still_counts_as_unanswered():
    # the hang was healed 3 s after the call began: the ledger says failed 503, not hung
    b = HistoryBuilder()
    b.call("j1", 1.0, 4.0, state="failed", status=503, client_gone=True)
    b.state("j1", 2.05, "failed", attempt=1, reason="timeout: model call exceeded 1s")
    b.row("j1", "failed", reason="timeout: model call exceeded 1s")
    assert check(b).valid is True
    b2 = HistoryBuilder()
    b2.call("j1", 1.0, 4.0, state="failed", status=503)
    b2.state("j1", 4.01, "failed", attempt=1, reason="error: provider returned 503")
    b2.row("j1", "failed", reason="error: provider returned 503")
    assert check(b2).valid is False


def test_answer_lost_on_the_network_is_judged_by_the_reason():
    # the provider answered (and billed) in 0.2 s; nobody received it; the app timed out
    b = HistoryBuilder()
    b.call("j1", 1.0, 1.2, state="done")
    b.state("j1", 2.3, "failed", attempt=1, reason="timeout: model call exceeded 1.2s")
    b.row("j1", "failed", reason="timeout: model call exceeded 1.2s")
    result = check(b)
    assert result.valid is False and result.details["judged"] == 1


def test_answered_calls_and_other_failures_are_not_judged_and_nothing_judged_is_unknown():
    b = HistoryBuilder()
    b.call("ok", 1.0, 1.1, state="done")
    b.state("ok", 1.2, "done", attempt=1)
    b.row("ok", "done")
    b.call("err", 1.0, 1.01, state="failed", status=500)
    b.state("err", 1.05, "failed", attempt=1, reason="error: provider returned 500")
    b.row("err", "failed", reason="error: provider returned 500")
    result = check(b)
    assert result.valid == "unknown" and result.details["judged"] == 0
    assert "no deadline was put to the test" in result.message


def test_the_clock_stops_at_the_first_write_of_the_attempt():
    # the failed item was written at the deadline; the job's final state came later
    b = unanswered_call(1.3)
    b.write("j1", 2.02, attempt=1, table="items")
    assert check(b).valid is True


def test_writes_before_the_call_or_by_another_attempt_do_not_stop_the_clock():
    b = unanswered_call(1.3)
    b.write("j1", 0.9, attempt=1, table="items")  # an earlier document, before the call
    b.write("j1", 2.02, attempt=2, table="items")  # another attempt
    result = check(b)
    assert result.valid is False and result.counterexample[0]["ended_after_s"] == 1.3


def test_call_cut_short_by_something_else_is_not_a_violation():
    # the connection was closed 0.3 s into the call (a healed network fault): an error, not a timeout
    b = HistoryBuilder()
    b.call("j1", 1.0, None, state="in_flight", status=None)
    b.state("j1", 1.3, "failed", attempt=1, reason="error: provider unreachable")
    b.row("j1", "failed", reason="error: provider unreachable")
    assert check(b).valid is True


def test_a_call_still_hanging_when_the_snapshot_is_taken_counts_as_unanswered():
    # nothing was recorded after the call began; only the final snapshot, 4 s later, covers the hang
    b = HistoryBuilder()
    b.state("j1", 0.5, "running", attempt=1)
    b.call("j1", 1.0, None, state="hung", status=None)
    b.row("j1", "running")
    assert check(b).valid == "unknown"  # a snapshot 1 s after the call: not past the deadline yet
    result = deadline_honoured(b.history(), b.snapshot(taken_at=5.0), deadline=DEADLINE, slack=SLACK)
    assert result.valid is False and "4.000s after it started" in result.message


def test_only_the_last_call_of_a_job_counts():
    b = HistoryBuilder()
    b.call("j1", 0.0, None, attempt=1, state="hung", status=None)
    b.state("j1", 0.2, "queued", attempt=1)
    b.call("j1", 2.0, None, attempt=2, state="hung", status=None)
    b.state("j1", 3.0, "failed", attempt=2, reason="timeout: model call exceeded 1s")
    b.row("j1", "failed", attempt=2, reason="timeout: model call exceeded 1s")
    assert check(b).valid is True


def test_without_a_deadline_the_verdict_is_unknown_and_slack_defaults_to_a_tenth():
    assert deadline_honoured(unanswered_call(1.0).history(), None).valid == "unknown"
    b = unanswered_call(1.09)
    assert deadline_honoured(b.history(), b.snapshot(), deadline=DEADLINE).valid is True
    b = unanswered_call(1.11)
    assert deadline_honoured(b.history(), b.snapshot(), deadline=DEADLINE).valid is False


def test_a_synthetic_run_with_hangs_honours_its_deadline():
    history, snapshot = synthetic_run(jobs=40, seed=1)
    result = deadline_honoured(history, snapshot, deadline=SYNTHETIC_DEADLINE)
    assert result.valid is True and result.details["judged"] > 0


def hung_without_a_reason(gave_up_after: float | None, healed_after: float, *, client_gone: bool = True,
                          client_timeout: object = None, retries: int = 0) -> HistoryBuilder:
    """A job of an app with no reason column: each of its calls (``retries`` more after the first, as an SDK
    retries) is hung by the provider; it fails ``gave_up_after`` after its last call began (None: never);
    the scenario heals the hang ``healed_after`` after that call began."""
    b = HistoryBuilder()
    b.state("j1", 0.5, "running", attempt=1)
    start = 1.0
    for _ in range(retries):  # earlier calls, cut at the deadline: the client went away from each
        b.call("j1", start, start + DEADLINE, state="hung", status=None, client_gone=True, mode="hang",
               client_timeout=client_timeout)
        start += DEADLINE + 0.05
    b.call("j1", start, start + healed_after, state="failed", status=503, client_gone=client_gone, mode="hang",
           client_timeout=client_timeout)
    if gave_up_after is None:
        b.row("j1", "running")
    else:
        b.state("j1", start + gave_up_after, "failed", attempt=1)
        b.row("j1", "failed", updated=start + gave_up_after)
    return b


def test_a_job_without_a_reason_that_gave_up_on_a_hung_call_at_the_deadline_is_valid():
    # the scenario healed the hang right after the job ended: the call never outlasted the deadline in the
    # ledger, and no reason says timeout; the ledger's hang and the client's hanging up are the evidence
    result = check(hung_without_a_reason(1.03, healed_after=1.08))
    assert result.valid is True and result.details["judged"] == 1
    with_retries = check(hung_without_a_reason(1.03, healed_after=1.08, retries=2))
    assert with_retries.valid is True and with_retries.details["judged"] == 1  # the last of the three calls


def test_a_job_that_gave_up_on_a_hung_call_judged_by_the_timeout_its_client_sent():
    b = hung_without_a_reason(1.03, healed_after=1.08, client_timeout=1.0)
    assert deadline_honoured(b.history(), b.snapshot(), slack_ratio=0.1).valid is True


def test_the_jobs_end_before_the_heal_is_evidence_even_when_the_ledger_missed_the_client_hanging_up():
    assert check(hung_without_a_reason(1.03, healed_after=1.08, client_gone=False)).valid is True


def test_a_hung_call_with_no_timeout_that_ends_its_job_only_after_the_heal_is_still_invalid():
    # the wrong app: nothing but the heal (4 s after the call began) ended the wait
    b = hung_without_a_reason(4.02, healed_after=4.0, client_gone=False, client_timeout="none")
    result = check(b)
    assert result.valid is False and "late" in result.counterexample[0]["why"]
    unconfigured = deadline_honoured(b.history(), b.snapshot())  # judged by the timeout its client sent: none
    assert unconfigured.valid is False and "without a timeout" in unconfigured.counterexample[0]["why"]


def test_a_job_that_ended_after_the_heal_answered_its_call_early_is_not_evidence():
    # healed 0.5 s into the call, the job failed on the provider's 503 at 0.52 s: no deadline was tested
    result = check(hung_without_a_reason(0.52, healed_after=0.5, client_gone=False))
    assert result.valid == "unknown" and "no deadline was put to the test" in result.message


def test_a_hung_call_whose_job_shows_no_end_yet_is_unknown_not_valid():
    result = check(hung_without_a_reason(None, healed_after=0.5, client_gone=False))
    assert result.valid == "unknown" and result.details["judged"] == 0
