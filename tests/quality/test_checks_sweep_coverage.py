"""``sweeps_cover_predicate``: over several runs, every row the sweep's predicate still selects is listed again."""
from __future__ import annotations

from harness.checks import UNKNOWN, run_checks
from harness.checks.result import Result
from harness.checks.sweep_coverage import NAME, sweeps_cover_predicate
from harness.history import vocabulary as v
from harness.history.builder import WALL_OFFSET, HistoryBuilder
from harness.history.event import OK


def verdict(b: HistoryBuilder) -> Result:
    return run_checks([sweeps_cover_predicate], b.history(), None)[NAME]


def run(b: HistoryBuilder, run_id: int, started: float, eligible: list[str], failed: list[str] = (),
        state: str = "done") -> None:
    processed = [r for r in eligible if r not in failed]
    b.event(v.SWEEP, OK, v.SWEEP, started + 0.5, run_id=str(run_id), eligible=eligible, processed=processed,
            failed=list(failed), summary={"processed": len(processed), "failed": len(failed)}, state=state,
            started=WALL_OFFSET + started)


def predicate(b: HistoryBuilder, t: float, rows: list[str], changed: dict[str, float] | None = None) -> None:
    """The rows still selected at ``t``; ``changed``: when each last changed (seconds into the run)."""
    b.event(v.SWEEP, OK, v.PREDICATE, t, rows=rows, query="SELECT id FROM invoices WHERE ...",
            changed={row: WALL_OFFSET + at for row, at in (changed or {}).items()})


def two_runs(second: list[str], still: list[str]) -> HistoryBuilder:
    """Run 1 lists rows 1-3 and fails row 2 (its lock was held); run 2 lists ``second``."""
    b = HistoryBuilder()
    run(b, 1, 1.0, ["1", "2", "3"], failed=["2"])
    run(b, 2, 3.0, second)
    predicate(b, 5.0, still)
    return b


def test_a_row_that_failed_once_and_was_handled_by_the_next_run_is_valid():
    result = verdict(two_runs(second=["2", "4"], still=[]))
    assert result.valid is True, result.message
    assert result.details["runs"] == 2


def test_a_row_failing_in_every_run_is_listed_each_time_and_valid():
    assert verdict(two_runs(second=["2", "4"], still=["2"])).valid is True


def test_a_finished_run_that_leaves_out_a_row_an_earlier_run_failed_on_is_invalid():
    """The second run skips what the first failed on (or starts after the first run's last id): row 2 waits."""
    result = verdict(two_runs(second=["4"], still=["2"]))
    assert result.valid is False
    first = result.counterexample[0]
    assert (first["row"], first["listed_by"], first["left_out_by"]) == ("2", "1", "2")


def test_a_run_that_did_not_finish_is_not_held_to_every_row():
    b = HistoryBuilder()
    run(b, 1, 1.0, ["1", "2"], failed=["2"])
    run(b, 2, 3.0, ["3"], state="timed_out")
    predicate(b, 5.0, ["2"])
    assert verdict(b).valid is True


def test_a_row_no_run_ever_listed_and_of_unknown_age_is_not_judged():
    result = verdict(two_runs(second=["2", "4"], still=["9"]))
    assert result.valid is True and result.details["never_listed"] == ["9"]


def test_a_row_unchanged_since_before_a_finished_run_that_never_listed_it_is_invalid():
    """A run whose own query differs from its predicate (due a day later, say) never lists the row."""
    b = HistoryBuilder()
    run(b, 1, 1.0, ["1"])
    run(b, 2, 3.0, ["1"])
    predicate(b, 5.0, ["9"], changed={"9": 0.5})
    result = verdict(b)
    assert result.valid is False
    assert (result.counterexample[0]["row"], result.counterexample[0]["left_out_by"]) == ("9", "1")


def test_a_row_that_changed_after_the_last_run_started_is_not_held_against_it():
    b = HistoryBuilder()
    run(b, 1, 1.0, ["1"])
    run(b, 2, 3.0, ["1"])
    predicate(b, 5.0, ["9"], changed={"9": 3.5})
    assert verdict(b).valid is True


def test_without_the_predicate_or_with_one_run_it_is_unknown():
    b = HistoryBuilder()
    run(b, 1, 1.0, ["1"])
    run(b, 2, 3.0, ["1"])
    assert verdict(b).valid == UNKNOWN
    one = HistoryBuilder()
    run(one, 1, 1.0, ["1"])
    predicate(one, 2.0, [])
    assert verdict(one).valid == UNKNOWN
