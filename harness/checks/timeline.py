"""A small, readable timeline of one job's events, for failure reports.

Times are seconds since the first event of the whole history, so the
timeline lines up with the counterexample and the HTML report.
"""
from __future__ import annotations

import json
from typing import Any

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
    text = json.dumps(dict(data), separators=(",", ":"), default=str, sort_keys=True)
    return text if len(text) <= SUMMARY_WIDTH else text[: SUMMARY_WIDTH - 1] + "…"


def timeline_entry(event: Event, start: float) -> dict[str, Any]:
    return {"at": round(event.t - start, 6), "source": event.source, "type": event.type,
            "name": event.name, "attempt": event.attempt, "what": summarize(event)}


def job_timeline(history: History, job_id: str | None) -> list[dict[str, Any]]:
    """The events of one job as timeline entries; a long one is cut in the middle."""
    if job_id is None:
        return []
    events = history.by_job(job_id)
    entries = [timeline_entry(e, history.start) for e in events]
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
