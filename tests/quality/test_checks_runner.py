"""run_checks composition, broken checkers, failure reports and exceptions."""
from __future__ import annotations

import functools

import pytest

from harness.checks import (
    ALL_CHECKERS, GLOBAL_INVARIANTS, UNKNOWN, InvariantViolation, Result, Verdict, checker_name,
    format_failure, invariant, merge_valid, run_checks, violation_error,
)
from harness.history.builder import HistoryBuilder
from harness.history.snapshot import Snapshot


@invariant("always_broken")
def broken(history, snapshot):
    raise ZeroDivisionError("bad arithmetic")


@invariant("never_valid")
def never(history, snapshot, job="j1"):
    return Result("never_valid", False, f"job {job} is bad", counterexample=[{"job_id": job, "at": 0.0}])


def stuck_and_double_billed() -> HistoryBuilder:
    b = HistoryBuilder()
    b.submit("j1", 0.0)
    b.state("j1", 0.01, "running", attempt=1)
    b.call("j1", 0.1, 0.2, attempt=1, key="a")
    b.call("j1", 0.3, 0.4, attempt=2, key="b")
    b.row("j1", "running", attempt=2, updated=0.3)
    return b


@pytest.mark.parametrize("values, merged", [
    ([], True), ([True, True], True), ([True, UNKNOWN], UNKNOWN),
    ([UNKNOWN, False, True], False), ([False, UNKNOWN], False),
])
def test_merge_valid(values, merged):
    assert merge_valid(values) == merged


def served_once() -> HistoryBuilder:
    b = HistoryBuilder()
    b.submit("j1", 0.0)
    b.state("j1", 0.01, "running", attempt=1)
    b.call("j1", 0.1, 0.2, attempt=1, key="a")
    b.state("j1", 0.3, "done", attempt=1)
    b.row("j1", "done", attempt=1, updated=0.3)
    return b


def test_a_checker_that_raises_is_unknown_and_the_others_still_run():
    b = served_once()
    verdict = run_checks([broken, *GLOBAL_INVARIANTS], b.history(), b.snapshot())
    result = verdict["always_broken"]
    assert result.valid == UNKNOWN
    assert "ZeroDivisionError: bad arithmetic" in result.message
    assert "Traceback" in result.details["traceback"]
    assert [r.valid for r in verdict.results[1:]] == [True, True, True]
    assert verdict.valid == UNKNOWN


def test_a_checker_returning_garbage_is_unknown():
    verdict = run_checks([lambda h, s: "yes"], HistoryBuilder().history(), None)
    assert verdict.valid == UNKNOWN and "not Result" in verdict.results[0].message


def test_invalid_wins_over_unknown():
    verdict = run_checks([broken, never], HistoryBuilder().history(), None)
    assert verdict.valid is False


def test_options_are_passed_by_name_and_kept():
    verdict = run_checks([never], HistoryBuilder().history(), None, options={"never_valid": {"job": "j9"}})
    assert verdict["never_valid"].message == "job j9 is bad"
    assert verdict.options == {"never_valid": {"job": "j9"}}


def test_checker_names_see_through_partials():
    assert checker_name(functools.partial(never, job="x")) == "never_valid"
    assert len({checker_name(c) for c in ALL_CHECKERS}) == len(ALL_CHECKERS)  # names are unique


def test_every_shipped_checker_answers_on_an_empty_history():
    empty = HistoryBuilder().history()
    verdict = run_checks(ALL_CHECKERS, empty, Snapshot())
    assert all("raised" not in r.message for r in verdict.results)
    assert run_checks(GLOBAL_INVARIANTS, empty, Snapshot()).valid == UNKNOWN  # no evidence, no verdict


def test_failed_results_carry_the_timeline_of_their_job():
    b = stuck_and_double_billed()
    verdict = run_checks(GLOBAL_INVARIANTS, b.history(), b.snapshot())
    timeline = verdict["no_double_billing"].timeline
    assert [(e["at"], e["source"], e["type"]) for e in timeline][:3] == [
        (0.001, "submit", "ok"), (0.01, "job", "ok"), (0.1, "paidapi", "invoke")]


def test_format_failure_shows_invariant_counterexample_timeline_artifacts_and_replay():
    b = stuck_and_double_billed()
    verdict = run_checks(GLOBAL_INVARIANTS, b.history(), b.snapshot())
    text = format_failure(verdict, "/tmp/artifacts/test_x", 1234, nodeid="scenarios/test_x.py::test_x")
    assert "every_job_terminal [invalid]: 1 of 1 jobs never reached a terminal state" in text
    assert "no_double_billing [invalid]" in text
    assert "call_id=call-1" in text and "call_id=call-2" in text
    assert "timeline of job j1" in text and "+0.100s  paidapi   invoke call #1" in text
    assert "artifacts: /tmp/artifacts/test_x" in text
    assert text.endswith("replay: pytest 'scenarios/test_x.py::test_x' --jobquake-seed=1234")


def test_violation_error_is_one_exception_or_a_group():
    b = stuck_and_double_billed()
    verdict = run_checks(GLOBAL_INVARIANTS, b.history(), b.snapshot())
    group = violation_error(verdict, "/tmp/a", 7)
    assert isinstance(group, ExceptionGroup)
    assert {e.result.name for e in group.exceptions} == {
        "every_job_terminal", "no_double_billing", "no_lost_submission"}
    assert all(isinstance(e, InvariantViolation) and e.seed == 7 for e in group.exceptions)
    single = violation_error(Verdict((verdict["no_double_billing"],)), "/tmp/a", 7)
    assert isinstance(single, InvariantViolation)
    assert "--jobquake-seed=7" in str(single) and "/tmp/a" in str(single)
    assert violation_error(Verdict(()), "/tmp/a", 7) is None


def test_verdict_round_trips_through_json_form():
    b = stuck_and_double_billed()
    verdict = run_checks(GLOBAL_INVARIANTS, b.history(), b.snapshot())
    again = Verdict.from_dict(verdict.to_dict())
    assert again == verdict


def test_unknown_fails_only_when_asked_and_reads_without_frames():
    from harness.checks import InvariantUnknown
    from harness.checks.failure import failure_text

    verdict = run_checks([broken, *GLOBAL_INVARIANTS], HistoryBuilder().history(), None)
    assert violation_error(verdict) is None  # nothing invalid
    error = violation_error(verdict, "/tmp/a", 5, "t.py::t", unknown_fails=True)
    assert isinstance(error, ExceptionGroup) and all(isinstance(e, InvariantUnknown) for e in error.exceptions)
    text = failure_text(error)
    assert text.startswith("4 invariants failed: always_broken [unknown], every_job_terminal [unknown]")
    assert text.count("replay: pytest 't.py::t' --jobquake-seed=5") == 1  # once, after every invariant
    assert "no_double_billing [unknown]: the paid API ledger was not read" in text
    assert failure_text(ValueError("x")) is None


def test_harness_checks_exports_every_shipped_checker_under_its_name():
    import harness.checks

    missing = [checker_name(c) for c in ALL_CHECKERS
               if getattr(harness.checks, checker_name(c), None) is not c or checker_name(c) not in harness.checks.__all__]
    assert missing == [], f"add to harness/checks/__init__.py: {missing}"
