"""The evidence a checker needs before it may say "valid" (Jepsen's rule: no evidence, ``unknown``).

A checker declares what it reads with ``@invariant(name, needs=(PAID_CALLS,))``;
``run_checks`` tests each need first and, when one is missing, returns
``unknown`` with the reason instead of running the checker. A need looks at
two things in the history:

* ``harness ok read {source, records}``: the harness read that source of
  evidence (the paid API ledger, the job state log, the final snapshot)
  and how many records it held. A history built by hand has no such
  events; there, events of the source itself show it was read.
* ``harness ok expect {paid_calls, jobs}``: what the scenario declared it
  makes (``@pytest.mark.jobquake(expect_paid_calls=0)``): a scenario
  that makes no paid call says so, and the billing checks accept an empty
  ledger from it; nothing else does.

``Missing(reason, shown)`` carries the sentence a person reads ("no paid
call was made: 3 calls answered 404") and the records it is about.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

from harness.checks.paid_calls import PaidCall, paid_calls
from harness.history import vocabulary as v
from harness.history.event import OK
from harness.history.history import History
from harness.history.snapshot import Snapshot
from harness.history.vocabulary import EXPECT, LEDGER_SOURCE, READ, STATE_LOG_SOURCE

SHOWN = 5  # records quoted with a missing-evidence reason


@dataclass(frozen=True)
class Missing:
    """Why a need is not met, and the records that show it."""

    reason: str
    shown: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Need:
    """One kind of evidence: a name, what it is (for people), and its test."""

    name: str
    description: str
    test: Callable[[History, Snapshot | None], Missing | None]

    def missing(self, history: History, snapshot: Snapshot | None) -> Missing | None:
        return self.test(history, snapshot)


def last_read(history: History, source: str) -> dict[str, Any] | None:
    """The harness's last ``read`` of ``source`` (its data: records and what else it counted); None if never."""
    reads = [e.data for e in history.by_source(v.HARNESS, name=READ) if e.data.get("source") == source]
    return reads[-1] if reads else None


def read_count(history: History, source: str) -> int | None:
    """How many records the harness read from ``source``; None when it never read it."""
    read = last_read(history, source)
    return None if read is None else int(read.get("records") or 0)


def expected(history: History, what: str) -> int | None:
    """What the scenario declared it makes (``paid_calls`` / ``jobs``), None if it declared nothing."""
    values = [e.data[what] for e in history.by_source(v.HARNESS, name=EXPECT) if e.data.get(what) is not None]
    return int(values[-1]) if values else None


def _rejected(call: PaidCall) -> bool:
    """A call the provider refused as a request (4xx): no model ran, nothing could be billed."""
    return isinstance(call.status, int) and 400 <= call.status < 500 and not call.billed


def _statuses(calls: list[PaidCall]) -> str:
    counts = Counter(c.status for c in calls)
    return ", ".join(f"{n} call(s) answered {status}" for status, n in counts.most_common())


def _call(call: PaidCall, start: float) -> dict[str, Any]:
    return {**call.evidence(start), "status": call.status}


def _paid_calls(history: History, snapshot: Snapshot | None) -> Missing | None:
    calls = list(paid_calls(history))
    if read_count(history, LEDGER_SOURCE) is None and not calls:
        return Missing("the paid API ledger was not read")
    if not calls and expected(history, "paid_calls") == 0:
        return None
    rejected = [c for c in calls if _rejected(c)]
    made = [c for c in calls if not _rejected(c)]
    if not made:
        why = _statuses(rejected) if rejected else "the ledger is empty"
        hint = "" if rejected else " (a scenario that makes none declares expect_paid_calls=0)"
        return Missing(f"no paid call was made: {why}{hint}",
                       [_call(c, history.start) for c in rejected[:SHOWN]])
    loose = [c for c in made if c.job_id is None]
    if loose:
        return Missing(f"{len(loose)} of {len(made)} call(s) could not be attributed to a job "
                       f"(no X-Job-Id): a duplicate among them would not be seen",
                       [_call(c, history.start) for c in loose[:SHOWN]])
    return None


def _job_ids(history: History, snapshot: Snapshot | None) -> set[str]:
    ids = {e.job_id for e in history.by_source(v.JOB) if e.job_id is not None}
    return ids | {row.job_id for row in (snapshot.jobs if snapshot is not None else ())}


def _jobs(history: History, snapshot: Snapshot | None) -> Missing | None:
    if read_count(history, STATE_LOG_SOURCE) is None and not history.by_source(v.JOB) and snapshot is None:
        return Missing("the job state log was not read and no snapshot was taken")
    if _job_ids(history, snapshot) or expected(history, "jobs") == 0:
        return None
    return Missing("no job was recorded: the job table and its state log are empty "
                   "(a scenario that makes none declares expect_jobs=0)")


def _submissions(history: History, snapshot: Snapshot | None) -> Missing | None:
    submits = history.by_source(v.SUBMIT, name=v.SUBMIT)
    if any(e.type == OK for e in submits) or expected(history, "jobs") == 0:
        return None
    if submits:
        answers = Counter(e.type for e in submits if e.type != "invoke")
        said = ", ".join(f"{n} {kind}" for kind, n in answers.items()) or "none answered"
        return Missing(f"no submission was accepted ({len(submits)} submit event(s): {said})")
    return Missing("no submission was recorded: nothing to follow")


def _state_changes(history: History, snapshot: Snapshot | None) -> Missing | None:
    if history.by_source(v.JOB, name=v.STATE) or expected(history, "jobs") == 0:
        return None
    if read_count(history, STATE_LOG_SOURCE) is None:
        return Missing("the job state log was not read")
    return Missing("the job state log is empty: no state change was recorded")


PAID_CALLS = Need("paid_calls", "the paid API ledger, with at least one call attributed to a job",
                  _paid_calls)
JOBS = Need("jobs", "the job table or its state log, with at least one job", _jobs)
SUBMISSIONS = Need("submissions", "at least one accepted submission", _submissions)
STATE_CHANGES = Need("state_changes", "the job state log, with at least one state change", _state_changes)

NEEDS: dict[str, Need] = {n.name: n for n in (PAID_CALLS, JOBS, SUBMISSIONS, STATE_CHANGES)}
