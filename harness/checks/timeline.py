"""A small, readable timeline of one job's events, for failure reports.

Times are seconds since the first event of the whole history, so the
timeline lines up with the counterexample and the HTML report.
"""
from __future__ import annotations

import json
from typing import Any, Mapping

from harness.checks.job_events import fault_pids, held_calls, job_events
from harness.checks.paid_calls import calls_by_job
from harness.history import vocabulary as v
from harness.history.event import Event
from harness.history.history import History

HEAD, TAIL = 10, 30  # a long timeline keeps its start and its end, where the story usually is
SUMMARY_WIDTH = 90


def summarize(event: Event) -> str:
    """A few words about an event's data, for one line of a timeline."""
    data = event.data
    if event.source == v.JOB and event.name == v.STATE:
        reason = f" ({data['reason']})" if data.get("reason") else ""
        return f"{data.get('state')}{reason}"
    if event.source == v.PAIDAPI:
        parts = [str(data.get("call_id")), f"step={data.get('step')}", f"key={data.get('key')}"]
        if event.type != "invoke":
            parts += [f"state={data.get('state')}", f"billed={data.get('billed')}"]
        return " ".join(parts)
    if event.source in (v.FAULT, v.WORKER):
        return _process_summary(event)
    return _clipped(data)


def _clipped(data: Mapping[str, Any]) -> str:
    text = json.dumps(dict(data), separators=(",", ":"), default=str, sort_keys=True)
    return text if len(text) <= SUMMARY_WIDTH else text[: SUMMARY_WIDTH - 1] + "…"


def _process_summary(event: Event) -> str:
    """``worker2 SIGKILL pid 16142`` for a kill, a worker's death or start; the fault's name first."""
    data = event.data
    who = data.get("worker") or data.get("service")
    words = [str(data["fault"]) + ":"] if event.source == v.FAULT and data.get("fault") else []
    words += [str(who)] if who else []
    words += [str(data["signal"])] if data.get("signal") else []
    words += [f"pid {data['pid']}"] if data.get("pid") is not None else []
    if len(words) > 1 or (words and event.source == v.WORKER):
        return " ".join(words)
    return _clipped({k: val for k, val in data.items() if k != "params"})


def timeline_entry(event: Event, start: float) -> dict[str, Any]:
    return {"at": round(event.t - start, 6), "source": event.source, "type": event.type,
            "name": event.name, "attempt": event.attempt, "what": summarize(event)}


def job_timeline(history: History, job_id: str | None) -> list[dict[str, Any]]:
    """The events of one job, with the faults and worker deaths that hit it (``job_events``), as
    timeline entries; a long one is cut in the middle."""
    if job_id is None:
        return []
    calls = calls_by_job(history).get(job_id, ())
    entries = []
    for event in job_events(history, job_id):
        entry = timeline_entry(event, history.start)
        if event.source == v.FAULT and event.type != "invoke":
            held = held_calls(calls, fault_pids(event.data), event.t)
            if held:
                entry["what"] += " while holding " + ", ".join(f"call #{c.call_id}" for c in held)
        entries.append(entry)
    if len(entries) > HEAD + TAIL:
        elided = len(entries) - HEAD - TAIL
        entries = entries[:HEAD] + [{"elided": elided}] + entries[-TAIL:]
    return entries


def format_timeline(entries: list[dict[str, Any]], indent: str = "    ") -> list[str]:
    """Timeline entries as aligned text lines."""
    lines = []
    for entry in entries:
        if "elided" in entry:
            lines.append(f"{indent}   … {entry['elided']} more events …")
            continue
        attempt = "" if entry.get("attempt") is None else f" #{entry['attempt']}"
        lines.append(f"{indent}{entry['at']:+9.3f}s  {entry['source']:<9} {entry['type']:<6} "
                     f"{entry['name']}{attempt}  {entry['what']}")
    return lines
