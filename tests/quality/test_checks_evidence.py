"""No evidence, no verdict: every checker answers unknown, with a reason, when what it reads is absent."""
from __future__ import annotations

import pytest

from harness.checks import ALL_CHECKERS, GLOBAL_INVARIANTS, UNKNOWN, checker_name, run_checks
from harness.history.vocabulary import EXPECT, LEDGER_SOURCE, READ, STATE_LOG_SOURCE
from harness.checks.runner import checker_needs
from harness.history import vocabulary as v
from harness.history.builder import HistoryBuilder

OPTIONS = {"timeout_labelled": {"deadline": 1.0}, "deadline_honoured": {"deadline": 1.0}}


def read(b: HistoryBuilder, source: str, records: int, t: float = 9.0) -> None:
    b.event(v.HARNESS, "ok", READ, t, source=source, records=records)


def served(b: HistoryBuilder, job_id: str = "j1", **call) -> HistoryBuilder:
    b.submit(job_id, 0.0)
    b.state(job_id, 0.01, "running", attempt=1)
    b.call(job_id, 0.1, 0.2, **call)
    b.state(job_id, 0.3, "done", attempt=1)
    b.row(job_id, "done")
    return b


@pytest.mark.parametrize("checker", ALL_CHECKERS, ids=checker_name)
def test_every_checker_is_unknown_without_evidence(checker):
    result = run_checks([checker], HistoryBuilder().history(), None, OPTIONS).results[0]
    assert result.valid == UNKNOWN, result
    assert result.message  # a reason a person can read


@pytest.mark.parametrize("checker", ALL_CHECKERS, ids=checker_name)
def test_every_checker_is_unknown_when_the_evidence_was_read_and_empty(checker):
    b = HistoryBuilder()
    read(b, LEDGER_SOURCE, 0)
    read(b, STATE_LOG_SOURCE, 0)
    result = run_checks([checker], b.history(), b.snapshot(), OPTIONS).results[0]
    assert result.valid == UNKNOWN, result


def test_the_billing_check_says_no_paid_call_was_made_and_shows_the_refused_calls():
    b = HistoryBuilder()
    for job in ("j1", "j2", "j3"):
        b.call(job, 0.1, 0.2, state="failed", status=404, billed=False)
    result = run_checks(GLOBAL_INVARIANTS, b.history(), b.snapshot())["no_double_billing"]
    assert result.valid == UNKNOWN
    assert result.message == "no paid call was made: 3 call(s) answered 404"
    assert [c["status"] for c in result.counterexample] == [404, 404, 404]
    assert result.details["missing_evidence"] == "paid_calls"


def test_the_billing_check_names_the_calls_it_could_not_attribute():
    b = served(HistoryBuilder())
    b.call(None, 0.4, 0.5)
    b.call(None, 0.6, 0.7)
    result = run_checks(GLOBAL_INVARIANTS, b.history(), b.snapshot())["no_double_billing"]
    assert result.valid == UNKNOWN
    assert result.message.startswith("2 of 3 call(s) could not be attributed to a job")
    assert [c["job_id"] for c in result.counterexample] == [None, None]


def test_an_unread_ledger_is_not_an_empty_one():
    b = HistoryBuilder()
    b.submit("j1", 0.0)
    b.row("j1", "done")
    assert run_checks(GLOBAL_INVARIANTS, b.history(), b.snapshot())["no_double_billing"].message == \
        "the paid API ledger was not read"
    read(b, LEDGER_SOURCE, 0)
    assert "the ledger is empty" in run_checks(GLOBAL_INVARIANTS, b.history(), b.snapshot())[
        "no_double_billing"].message


def test_a_scenario_that_declares_no_paid_call_is_judged_on_an_empty_ledger():
    b = HistoryBuilder()
    b.submit("j1", 0.0)
    b.state("j1", 0.1, "done", attempt=1)
    b.row("j1", "done")
    read(b, LEDGER_SOURCE, 0)
    b.event(v.HARNESS, "ok", EXPECT, 9.5, paid_calls=0)
    verdict = run_checks(GLOBAL_INVARIANTS, b.history(), b.snapshot())
    assert verdict.valid is True, verdict


def test_a_scenario_that_declares_no_job_is_judged_without_one():
    b = HistoryBuilder()
    read(b, LEDGER_SOURCE, 0)
    read(b, STATE_LOG_SOURCE, 0)
    b.event(v.HARNESS, "ok", EXPECT, 9.5, paid_calls=0, jobs=0)
    assert run_checks(GLOBAL_INVARIANTS, b.history(), b.snapshot()).valid is True


def test_terminal_checks_need_a_job_and_say_so():
    b = HistoryBuilder()
    read(b, STATE_LOG_SOURCE, 0)
    result = run_checks(GLOBAL_INVARIANTS, b.history(), b.snapshot())["every_job_terminal"]
    assert result.valid == UNKNOWN and result.message.startswith("no job was recorded")


def test_a_served_job_is_valid_for_every_global_invariant():
    assert run_checks(GLOBAL_INVARIANTS, served(HistoryBuilder()).history(),
                      served(HistoryBuilder()).snapshot()).valid is True


def test_every_global_invariant_declares_what_it_needs():
    assert all(checker_needs(c) for c in GLOBAL_INVARIANTS)
