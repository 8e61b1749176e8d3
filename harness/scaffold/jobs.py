"""The job table and its columns, as init infers them.

The job table is the one with a ``status`` / ``state`` column (named ``job`` or
``jobs`` first, then one whose name has the word ``job``). Its reason
and attempt columns are matched by name. A heartbeat column is inferred
only from a column whose name says so (``heartbeat_at``, ``last_beat``...)
or that a function named for heartbeats writes; a last-change column
(``updated_at``) is a job's age in stuck-job messages, never its heartbeat.
Final states come from a constant of them, or from the state enum's values
that say a job ended (``completed``, ``failed``...).
"""
from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass

from harness.scaffold.findings import Findings, Table

TODO = "TODO(jobquake init)"
STATE_WORDS = ("status", "state")
COLUMN_HINTS = {  # config key -> words a column name of that role contains, in order of trust
    "job_reason_column": ("reason", "note", "error", "failure", "message"),
    "job_attempt_column": ("attempt", "tries", "try_", "retries", "retry"),
}
HEARTBEAT_WORDS = ("heartbeat", "last_beat", "beat_at", "alive", "last_seen", "keepalive", "pinged")
UPDATED_WORDS = ("updated_at", "updated", "modified", "touched", "changed_at", "last_update")
FAILURE_ENDINGS = ("_failed", "_error", "_timeout", "_timed_out")  # chunk_failed, upload_error...
SUCCESS_WORDS = ("done", "completed", "complete", "succeeded", "success", "finished", "summarised", "summarized",
                 "processed", "ready")
FAILURE_WORDS = ("failed", "failure", "error", "errored", "cancelled", "canceled", "aborted", "rejected",
                 "timed_out", "timeout", "expired", "dead", "needs_human", "needs_review", "skipped")


@dataclass
class JobColumns:
    """The job table and what init read of its columns."""

    table: Table
    state: str
    written_as_heartbeat: str | None = None  # a column a function named for heartbeats writes
    final_states: tuple[str, ...] | None = None
    final_why: str = ""

    def lines(self, todos: list[str]) -> list[str]:
        columns = [c for c, _ in self.table.columns]
        key = next((c for c, primary in self.table.columns if primary), columns[0])
        out = [f"# found: table {self.table.name!r} ({self.table.module}.{self.table.variable}) has a "
               f"{self.state!r} column", f"job_table = {json.dumps(self.table.name)}",
               f"job_id_column = {json.dumps(key)}", f"job_state_column = {json.dumps(self.state)}"]
        for option, words in COLUMN_HINTS.items():
            match = next((c for w in words for c in columns if w in c.lower()), None)
            if match:
                out.append(f"{option} = {json.dumps(match)}")
            else:
                out += [f"# {TODO}: {option}: no column looked like one; empty means none", f"{option} = \"\""]
                todos.append(f"[tool.jobquake] {option}: no column of {self.table.name!r} looked like one "
                             "(left empty)")
        out += self._heartbeat_lines(columns)
        return out + self._terminal_lines(todos)

    def _heartbeat_lines(self, columns: list[str]) -> list[str]:
        beat = self.heartbeat
        updated = next((c for w in UPDATED_WORDS for c in columns if w in c.lower() and c != beat), None)
        out = [f"job_heartbeat_column = {json.dumps(beat)}  # a column the app beats while a job runs"] if beat \
            else ["# no column is a heartbeat (none is named or written as one): none; stuck jobs show their "
                  "last update", 'job_heartbeat_column = ""']
        if updated:
            out.append(f"job_updated_column = {json.dumps(updated)}  # a job's age is since its last change")
        return out

    @property
    def heartbeat(self) -> str | None:
        columns = [c for c, _ in self.table.columns]
        by_name = next((c for w in HEARTBEAT_WORDS for c in columns if w in c.lower()), None)
        return by_name or self.written_as_heartbeat

    def _terminal_lines(self, todos: list[str]) -> list[str]:
        if self.final_states:
            return [f"terminal_states = {json.dumps(list(self.final_states))}  # found: {self.final_why}"]
        todos.append("[tool.jobquake] terminal_states: the states a person can see as final")
        return [f"# {TODO}: terminal_states = the states a person can see as final",
                '# terminal_states = ["done", "failed"]']


def job_columns(found: Findings) -> JobColumns | None:
    """The job table's columns as init reads them; None when no table has a state column."""
    with_state = [t for t in found.tables if any(c.lower() in STATE_WORDS for c, _ in t.columns)]
    if not with_state:
        return None
    table = min(with_state, key=_job_likeness)
    job = JobColumns(table, next(c for c, _ in table.columns if c.lower() in STATE_WORDS))
    job.written_as_heartbeat = _written_by_heartbeat(found, table)
    job.final_states, job.final_why = _final_states(found, table.types.get(job.state, ""))
    return job


def _job_likeness(table: Table) -> int:
    """0 for a table named ``job`` / ``jobs``, 1 for one whose name has a word ``job``, 2 for any other
    (the first of equals wins): an app with several tables of states has one that is its jobs'."""
    words = table.name.lower().replace("-", "_").split("_")
    return 0 if table.name.lower() in ("job", "jobs") else 1 if {"job", "jobs"} & set(words) else 2


def _written_by_heartbeat(found: Findings, table: Table) -> str | None:
    """A column of ``table`` that a function named for heartbeats writes."""
    columns = {c for c, _ in table.columns}
    for fn in found.functions:
        if not any(word in fn.name.lower() for word in ("heartbeat", "keepalive", "keep_alive")):
            continue
        for node in ast.walk(fn.body):
            written = None
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                written = node.attr
            elif isinstance(node, ast.keyword):
                written = node.arg
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                written = next((c for c in columns if f"set {c}" in node.value.lower()), None)
            if written in columns:
                return written
    return None


def _final_states(found: Findings, state_type: str = "") -> tuple[tuple[str, ...] | None, str]:
    """From a constant of final states; else from the enum the state column is typed with, or any enum."""
    if found.final_states:
        return found.final_states, found.final_states_why or "a constant of final states"
    typed = [name for name in found.state_values if name in re.findall(r"\w+", state_type)]
    for name in [*typed, *found.state_values]:
        values = found.state_values[name]
        lowered = [v.lower() for v in values]
        success = [v for w in SUCCESS_WORDS for v, low in zip(values, lowered) if low == w]
        failure = [v for v, low in zip(values, lowered) if low in FAILURE_WORDS or low.endswith(FAILURE_ENDINGS)]
        if success and failure:
            return (success[0], *failure), f"the values of {name} that say a job ended (check the list)"
    return None, ""
