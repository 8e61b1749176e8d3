"""The terminal summary: a table of scenarios × invariants.

``summary_lines(results_per_test)`` returns lines for pytest's terminal
summary hook (``terminalreporter.write_line`` each)::

    scenario                            terminal billing lost timeout
    test_kill.py::test_kill_mid_call       ✓       ✗      ✓     ·
    ✓ valid  ✗ invalid  ? unknown  · not checked
    2 scenarios: 1 valid, 1 invalid, 0 unknown
"""
from __future__ import annotations

from typing import Mapping

from harness.checks.result import Verdict, mark

SHORT_NAMES = {
    "every_job_terminal": "terminal", "no_double_billing": "billing",
    "no_lost_submission": "lost", "timeout_labelled": "timeout", "sweep_complete": "sweep",
    "no_effect_from_dead_attempt": "dead", "no_overlapping_attempts": "overlap",
    "status_events_consistent": "events", "effective_budget": "budget", "query_budget": "query",
    "terminal_is_final": "final", "no_paid_call_for_done_step": "done-step",
    "no_upload_billed_twice": "upload", "deadline_honoured": "deadline", "faults_landed": "landed",
}
UNICODE_MARKS = {"valid": "✓", "invalid": "✗", "unknown": "?", None: "·"}
ASCII_MARKS = {"valid": "ok", "invalid": "FAIL", "unknown": "?", None: "-"}
MAX_SCENARIO_WIDTH = 60


def scenario_label(nodeid: str) -> str:
    """A test id without its directories: ``file.py::test``."""
    path, sep, rest = nodeid.partition("::")
    label = path.rsplit("/", 1)[-1] + sep + rest
    return label if len(label) <= MAX_SCENARIO_WIDTH else "…" + label[-(MAX_SCENARIO_WIDTH - 1):]


def _columns(results_per_test: Mapping[str, Verdict]) -> list[str]:
    names: dict[str, None] = {}
    for verdict in results_per_test.values():
        names.update(dict.fromkeys(verdict.names()))
    return list(names)


def summary_lines(results_per_test: Mapping[str, Verdict], ascii: bool = False) -> list[str]:
    """The table, a legend and a count line; empty when no scenario was checked."""
    if not results_per_test:
        return []
    marks = ASCII_MARKS if ascii else UNICODE_MARKS
    names = _columns(results_per_test)
    headers = [SHORT_NAMES.get(n, n) for n in names]
    labels = {nodeid: scenario_label(nodeid) for nodeid in results_per_test}
    first = max(len("scenario"), *(len(label) for label in labels.values()))
    lines = ["scenario".ljust(first) + "".join(f"  {h}" for h in headers)]
    for nodeid, verdict in results_per_test.items():
        got = {r.name: mark(r.valid) for r in verdict.results}
        cells = "".join(f"  {marks[got.get(n)]:^{len(h)}}" for n, h in zip(names, headers))
        lines.append((labels[nodeid].ljust(first) + cells).rstrip())
    lines.append("  ".join(f"{marks[k]} {k or 'not checked'}" for k in ("valid", "invalid", "unknown", None)))
    counts = [mark(v.valid) for v in results_per_test.values()]
    lines.append(f"{len(counts)} scenario(s): {counts.count('valid')} valid, "
                 f"{counts.count('invalid')} invalid, {counts.count('unknown')} unknown")
    return lines
