"""The run's history: an append-only log of events, written to disk as it happens.

Public API (see each module for details):

* ``Event`` (``event.py``): one frozen record ``{index, t, wall, source, type,
  name, job_id, attempt, data}``; ``to_json`` / ``from_json``.
* ``vocabulary`` (``vocabulary.py``): every source and event name in use.
* ``Recorder(path)`` (``recorder.py``): ``record(source, type, name, job_id=None,
  attempt=None, data=None, t=None, wall=None)``, ``extend(events)``,
  ``events() -> History``, ``close()``; ``load(path) -> History``.
* ``Record(recorder)`` (``record.py``): ``jq.record``, the typed way to write
  submissions, status events and worker lifecycle.
* ``History`` (``history.py``): immutable, ordered by ``(t, index)``;
  ``by_job``, ``by_source``, ``jobs``, ``first``, ``last``, ``start``, ``end``.
* ``events_from_ledger(records)``, ``events_from_triggers(records)``
  (``converters.py``): the paid API's ledger and failpoint triggers as events
  (the app's job state log and the rest of its evidence: ``harness.evidence.events``).
* ``Snapshot``, ``JobRow`` (``snapshot.py``): every job row at the end of a run,
  the checkers' second input; ``WALL_CLOCK``, ``wall_to_monotonic()``
  (``clock.py``): wall times placed on the monotonic clock of the history.
* ``HistoryBuilder`` (``builder.py``): write histories and snapshots by hand,
  for tests and custom checkers; ``synthetic_run(jobs, seed, bugs)``
  (``synthetic.py``): realistic seeded runs for benchmarks and previews.
  Neither is imported here: they are loaded only where used.
"""
from __future__ import annotations

from harness.history import vocabulary
from harness.history.converters import events_from_ledger, events_from_triggers
from harness.history.event import COMPLETIONS, EVENT_TYPES, FAIL, INFO, INVOKE, OK, Event
from harness.history.history import History
from harness.history.record import Record
from harness.history.recorder import Recorder, load

__all__ = [
    "COMPLETIONS", "EVENT_TYPES", "FAIL", "INFO", "INVOKE", "OK",
    "Event", "History", "Record", "Recorder",
    "events_from_ledger", "events_from_triggers",
    "load", "vocabulary",
]
