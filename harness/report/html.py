"""A self-contained HTML timeline of one scenario: one file, no external assets.

``render_html(history, verdict, snapshot, title) -> str`` gives a page with
the verdict table, a legend, the timeline (jobs as rows, states as coloured
bars, paid calls as marks: filled = billed, hollow = not billed, dashed =
not delivered, red ring = duplicate billing; fault windows shaded;
failpoint triggers as orange triangles) and the counterexamples as text.
Hovering any mark shows its details (a few lines of inline JS).
"""
from __future__ import annotations

from html import escape

from harness.checks.failure import format_result
from harness.checks.result import Verdict, mark
from harness.history.history import History
from harness.history.snapshot import Snapshot
from harness.report.html_assets import CSS, JS, state_colour
from harness.report.svg import render_svg, shape
from harness.report.timeline_model import TimelineModel, build_model, lane_span

MAX_CLOSE_UPS = 5

MARKS = {"valid": "✓", "invalid": "✗", "unknown": "?"}

_LEGEND_MARKS = (
    ("billed call", '<line x1="2" y1="8" x2="22" y2="8" stroke="#0f172a" stroke-width="1.5"/>'
                    '<circle cx="22" cy="8" r="3.5" fill="#0f172a"/>'),
    ("not billed", '<line x1="2" y1="8" x2="22" y2="8" stroke="#0f172a" stroke-width="1.5"/>'
                   '<circle cx="22" cy="8" r="3.5" fill="#fff" stroke="#0f172a"/>'),
    ("not delivered", '<line x1="2" y1="8" x2="22" y2="8" stroke="#0f172a" stroke-dasharray="3 2"/>'),
    ("duplicate billing", '<line x1="2" y1="8" x2="20" y2="8" stroke="#dc2626" stroke-width="2.5"/>'
                          '<circle cx="20" cy="8" r="3.5" fill="#dc2626"/>'
                          '<circle cx="20" cy="8" r="6.5" fill="none" stroke="#dc2626"/>'),
    ("provider error", '<path d="M15,5 L21,11 M15,11 L21,5" stroke="#dc2626" stroke-width="1.5"/>'),
    ("failpoint", shape("failpoint", 12, 4)), ("attempt declared dead", shape("attempt_dead", 12, 3)),
    ("worker killed", shape("worker_killed", 12, 4)), ("status sent to users", shape("status", 12, 2)),
    ("write accepted / refused", shape("write_ok", 8, -9) + shape("write_refused", 16, -9)),
    ("fault took effect / did not", shape("fault_landed", 8, 3) + shape("fault_missed", 18, 3)),
    ("fault window", '<rect x="2" y="2" width="22" height="12" fill="#fb923c" fill-opacity="0.2" stroke="#fb923c"/>'),
)


def _verdict_table(verdict: Verdict) -> str:
    rows = []
    for result in verdict.results:
        word = mark(result.valid)
        rows.append(f'<tr><td class="mark {word}">{MARKS[word]}</td><td>{escape(result.name)}</td>'
                    f"<td>{escape(result.message)}</td></tr>")
    return f'<table class="verdict">{"".join(rows)}</table>'


def _legend(model: TimelineModel) -> str:
    states = dict.fromkeys(bar.state for lane in model.jobs for bar in lane.bars)
    items = [f'<span><svg width="26" height="16"><rect x="1" y="3" width="24" height="10" rx="2" '
             f'fill="{state_colour(s)}"/></svg> {escape(s)}</span>' for s in states]
    items += [f'<span><svg width="28" height="16">{svg}</svg> {escape(label)}</span>'
              for label, svg in _LEGEND_MARKS]
    return f'<div class="legend">{"".join(items)}</div>'


def _close_ups(model: TimelineModel) -> str:
    """Each flagged job drawn again over its own active span, where its marks do not crowd."""
    blocks = []
    for lane in [lane for lane in model.jobs if lane.flagged][:MAX_CLOSE_UPS]:
        span = lane_span(lane)
        if span is None:
            continue
        blocks.append(f"<h3>job {escape(lane.label)}: +{span[0]:.3f}s to +{span[1]:.3f}s</h3>"
                      f'<div class="chart">{render_svg(model, [lane], span)}</div>')
    return "<h2>Close-ups of the jobs in counterexamples</h2>" + "".join(blocks) if blocks else ""


def _counterexamples(verdict: Verdict) -> str:
    blocks = [f"<h3>{escape(r.name)}</h3><pre>{escape(chr(10).join(format_result(r)))}</pre>"
              for r in verdict.invalid() + verdict.unknown()]
    return "<h2>Counterexamples</h2>" + "".join(blocks) if blocks else ""


def _meta(history: History, model: TimelineModel, snapshot: Snapshot | None) -> str:
    jobs = len(model.jobs) + model.hidden_jobs
    parts = [f"{len(history)} events", f"{jobs} jobs", f"{model.duration:.3f}s"]
    if snapshot is not None:
        parts.append(f"{len(snapshot.jobs)} rows in the final snapshot")
    return " · ".join(parts)


def render_html(history: History, verdict: Verdict | None, snapshot: Snapshot | None,
                title: str) -> str:
    """The whole page as a string (write it to ``timeline.html``)."""
    verdict = verdict or Verdict(())
    model = build_model(history, verdict, snapshot)
    word = mark(verdict.valid)
    hidden = (f'<p class="meta">{model.hidden_jobs} more jobs not drawn (jobs named by a '
              f"counterexample are always drawn first).</p>" if model.hidden_jobs else "")
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>",
        f'<h1>{escape(title)} <span class="badge {word}">{word}</span></h1>',
        f'<div class="meta">{_meta(history, model, snapshot)}; times are seconds since the first '
        f"event; hover a mark for details</div>",
        _verdict_table(verdict), "<h2>Timeline</h2>", _legend(model),
        f'<div class="chart">{render_svg(model)}</div>', hidden, _close_ups(model),
        _counterexamples(verdict),
        f'<div id="tip"></div><script>{JS}</script>', "</body></html>",
    ])
