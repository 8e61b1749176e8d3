"""Work from an earlier test, seen in this one: reported as leaked, never silently absorbed.

Which jobs a test created: the jobs it submitted (``submit`` events in its
history, recorded by the scenario or the app client) and the job rows
inserted into its database (the state log's ``INSERT``s; each test gets a
fresh database, so every row in it was written during the test). Any other
job that shows up in the test's evidence (a state change, a paid call, an
app write or event, a failpoint trigger) is work the test did not create:
it leaked from an earlier test. The session remembers which test created
each job id, so the leak names its test when it can; the failure is then
that test's, recorded in its verdict too.

The verdict asks once, ``apart_from_earlier(history, earlier)``: the result,
the history to judge (without the leaked events, so that the test is judged
on its own work) and the jobs the test created (remembered for later tests).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from harness.checks.result import Result, invalid_result, valid_result
from harness.history import vocabulary as v
from harness.history.event import Event
from harness.history.history import History

NAME = "no_work_from_earlier_tests"
LEAKED_TO_LATER = "no_work_leaked_to_later_tests"  # the earlier test's side of the same failure
# sources whose events are the app's work (submissions, faults, workers, harness notes are not)
WORK_SOURCES = (v.JOB, v.PAIDAPI, v.WRITE, v.EVENT, v.FAILPOINT, v.SWEEP)
UNNAMED = "an earlier test"


def created_jobs(history: History) -> set[str]:
    """Job ids the test submitted or inserted into its own database."""
    created = {e.job_id for e in history.by_source(v.SUBMIT) if e.job_id is not None}
    created |= {str(e.data["job_id"]) for e in history.by_source(v.SUBMIT) if e.data.get("job_id")}
    created |= {e.job_id for e in history.by_source(v.JOB, name=v.STATE)
                if e.job_id is not None and e.data.get("op") == "INSERT"}
    return created


def leaked_events(history: History) -> list[Event]:
    """Events of work sources that refer to a job the test did not create."""
    created = created_jobs(history)
    return [e for e in history if e.source in WORK_SOURCES and e.job_id is not None
            and e.job_id not in created]


def without_leaks(history: History) -> History:
    """The history without leaked events: the test is judged on its own work only."""
    created = created_jobs(history)
    return history.filter(lambda e: not (e.source in WORK_SOURCES and e.job_id is not None
                                         and e.job_id not in created))


def _violation(history: History, event: Event, earlier: Mapping[str, str]) -> dict[str, Any]:
    origin = earlier.get(str(event.job_id), UNNAMED)
    return {"job_id": event.job_id, "attempt": event.attempt, "at": history.relative(event.t),
            "event": f"{event.source} {event.type} {event.name}", "leaked_from": origin,
            "what": f"leaked from {origin}: this test did not create job {event.job_id}"}


def no_work_from_earlier_tests(history: History, earlier: Mapping[str, str]) -> Result:
    """Invalid when the history holds work of jobs the test did not create (``earlier``: job -> test)."""
    leaked = leaked_events(history)
    if not leaked:
        return valid_result(NAME, f"every job in the evidence was created by this test "
                                  f"({len(created_jobs(history))} job(s))")
    violations = [_violation(history, e, earlier) for e in leaked]
    origins = sorted({item["leaked_from"] for item in violations})
    jobs = sorted({str(item["job_id"]) for item in violations})
    return invalid_result(NAME, f"{len(leaked)} event(s) of {len(jobs)} job(s) this test did not create "
                                f"({', '.join(jobs[:5])}): leaked from {', '.join(origins)}", violations,
                          leaked_from=origins)


@dataclass(frozen=True)
class Apart:
    """What ``apart_from_earlier`` found: its result, the history to judge, the jobs this test created."""

    result: Result
    judged: History
    created: frozenset[str]


def apart_from_earlier(history: History, earlier: Mapping[str, str]) -> Apart:
    """Check that the history holds no work of earlier tests (``earlier``: job id -> the test that created it)."""
    result = no_work_from_earlier_tests(history, earlier)
    judged = without_leaks(history) if result.valid is False else history
    return Apart(result, judged, frozenset(created_jobs(history)))


def leaked_to_later(nodeid: str, result: Result) -> Result:
    """The earlier test's own failure for work of it that reached ``nodeid``."""
    return invalid_result(LEAKED_TO_LATER, f"work of this test reached the later test {nodeid}: "
                                           f"{result.message}", result.details.get("violations", [])[:20])
