"""Draw a ``TimelineModel`` as one inline SVG: jobs as rows, states as bars, calls as marks."""
from __future__ import annotations

import math
from html import escape

from harness.report.html_assets import state_colour
from harness.report.timeline_model import CallMark, Lane, PointMark, TimelineModel

LABEL_W, PLOT_W, PAD_R = 200, 1080, 24
AXIS_H, ROW_H = 40, 22
BAR_Y, BAR_H, CALL_Y = 3, 10, 17
INK, RED, FAULT = "#0f172a", "#dc2626", "#fb923c"
FAINT = ' fill-opacity="0.3"'


def _attr(text: str) -> str:
    return escape(text, quote=True)


def nice_step(duration: float, target_ticks: int = 10) -> float:
    """A 1/2/5 × 10^k step giving about ``target_ticks`` ticks over ``duration``."""
    raw = max(duration, 1e-9) / target_ticks
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


class _Canvas:
    """Maps times in ``[lo, hi]`` onto the plot; times outside are pinned to its edges."""

    def __init__(self, lo: float, hi: float):
        self.lo, self.hi = lo, max(hi, lo + 1e-9)
        self.scale = PLOT_W / (self.hi - self.lo)
        self.parts: list[str] = []

    @property
    def duration(self) -> float:
        return self.hi - self.lo

    def x(self, t: float) -> float:
        return round(LABEL_W + (max(self.lo, min(t, self.hi)) - self.lo) * self.scale, 2)

    def shows(self, start: float, end: float | None = None) -> bool:
        """Whether anything of [start, end] falls inside the drawn span."""
        return start <= self.hi and (end if end is not None else start) >= self.lo

    def add(self, svg: str) -> None:
        self.parts.append(svg)


def _axis(c: _Canvas, height: int) -> None:
    step = nice_step(c.duration)
    digits = max(0, -math.floor(math.log10(step))) if step < 1 else 0
    for i in range(math.ceil(c.lo / step - 1e-9), math.floor(c.hi / step + 1e-9) + 1):
        x = c.x(i * step)
        c.add(f'<line x1="{x}" y1="{AXIS_H - 6}" x2="{x}" y2="{height}" stroke="#e2e8f0"/>')
        c.add(f'<text x="{x}" y="{AXIS_H - 9}" text-anchor="middle">{i * step:.{digits}f}s</text>')


def _windows(c: _Canvas, model: TimelineModel, height: int) -> None:
    for w in model.windows:
        if not c.shows(w.start, w.end):
            continue
        x0, x1 = c.x(w.start), c.x(w.end)
        c.add(f'<rect x="{x0}" y="12" width="{max(x1 - x0, 1.5):.2f}" height="{height - 12}" '
              f'fill="{FAULT}" fill-opacity="0.13" stroke="{FAULT}" stroke-opacity="0.5" '
              f'data-tip="{_attr(f"fault {w.label}: +{w.start:.3f}s to +{w.end:.3f}s" + chr(10) + w.tip)}"/>')
        right = LABEL_W + PLOT_W
        anchor = f'x="{x0 + 3}"' if x0 + 160 < right else f'x="{min(x1, right) - 3}" text-anchor="end"'
        c.add(f'<text {anchor} y="10" fill="#c2410c">⚡ {escape(w.label)}</text>')


def _call(c: _Canvas, y: float, call: CallMark) -> None:
    if not c.shows(call.start, call.end if call.end is not None else c.hi):
        return
    x0 = c.x(call.start)
    x1 = c.x(call.end if call.end is not None else c.hi)
    colour = RED if call.duplicate else INK
    dash = ' stroke-dasharray="3 2"' if call.outcome != "ok" else ""
    width = 2.5 if call.duplicate else 1.5
    tip = _attr(call.tip)
    c.add(f'<g data-tip="{tip}"><line x1="{x0}" y1="{y}" x2="{max(x1, x0 + 1)}" y2="{y}" '
          f'stroke="{colour}" stroke-width="{width}"{dash}/>'
          f'<line x1="{x0}" y1="{y - 3}" x2="{x0}" y2="{y + 3}" stroke="{colour}"/>')
    if call.end is None:
        c.add(f'<path d="M{x1 - 5},{y - 3} L{x1},{y} L{x1 - 5},{y + 3}" fill="none" stroke="{colour}"/></g>')
        return
    if call.outcome == "fail":
        c.add(f'<path d="M{x1 - 3},{y - 3} L{x1 + 3},{y + 3} M{x1 - 3},{y + 3} L{x1 + 3},{y - 3}" '
              f'stroke="{RED}" stroke-width="1.5"/></g>')
        return
    fill = colour if call.billed else "#fff"
    ring = (f'<circle cx="{x1}" cy="{y}" r="6.5" fill="none" stroke="{RED}" stroke-width="1.5"/>'
            if call.duplicate else "")
    c.add(f'{ring}<circle cx="{x1}" cy="{y}" r="3.5" fill="{fill}" stroke="{colour}" stroke-width="1.3"/></g>')


_SHAPES = {
    "failpoint": lambda x, y: f'<path d="M{x - 4},{y} L{x + 4},{y} L{x},{y + 6} Z" fill="#f97316"/>',
    "attempt_dead": lambda x, y: (f'<path d="M{x},{y} L{x + 4},{y + 5} L{x},{y + 10} L{x - 4},{y + 5} Z" '
                                  f'fill="{INK}"/>'),
    "worker_killed": lambda x, y: (f'<path d="M{x - 4},{y} L{x + 4},{y + 8} M{x - 4},{y + 8} L{x + 4},{y}" '
                                   f'stroke="{RED}" stroke-width="2"/>'),
    "status": lambda x, y: f'<rect x="{x - 1}" y="{y - 1}" width="2.5" height="13" fill="#7c3aed"/>',
    "write_ok": lambda x, y: f'<rect x="{x - 2}" y="{y + 12}" width="4" height="4" fill="#475569"/>',
    "write_refused": lambda x, y: (f'<rect x="{x - 2}" y="{y + 12}" width="4" height="4" fill="#fff" '
                                   f'stroke="#475569"/>'),
    "submit": lambda x, y: f'<circle cx="{x}" cy="{y + 5}" r="2.5" fill="#64748b"/>',
    "deleted": lambda x, y: (f'<path d="M{x - 4},{y} L{x + 4},{y + 10} M{x - 4},{y + 10} L{x + 4},{y}" '
                             f'stroke="{INK}"/>'),
    "worker": lambda x, y: f'<circle cx="{x}" cy="{y + 5}" r="3.5" fill="#16a34a"/>',
    "sweep": lambda x, y: f'<rect x="{x - 4}" y="{y + 1}" width="8" height="8" fill="#0d9488"/>',
    "query": lambda x, y: f'<rect x="{x - 3}" y="{y + 2}" width="6" height="6" fill="#94a3b8"/>',
    "budget": lambda x, y: f'<circle cx="{x}" cy="{y + 5}" r="3" fill="#94a3b8"/>',
    "fault_landed": lambda x, y: (f'<path d="M{x - 5},{y + 5} L{x},{y} L{x + 5},{y + 5} L{x},{y + 10} Z" '
                                  f'fill="#ea580c"/>'),
    "fault_missed": lambda x, y: (f'<path d="M{x - 5},{y + 5} L{x},{y} L{x + 5},{y + 5} L{x},{y + 10} Z" '
                                  f'fill="#fff" stroke="#ea580c" stroke-width="1.5"/>'),
    "settle": lambda x, y: f'<rect x="{x - 1}" y="{y - 2}" width="3" height="14" fill="{RED}"/>',
}


def shape(kind: str, x: float, y: float) -> str:
    """The SVG of one point mark of ``kind`` at (x, y) (y = top of its row's bar)."""
    return _SHAPES.get(kind, _SHAPES["budget"])(x, y)


def _point(c: _Canvas, y: float, point: PointMark) -> None:
    if not c.shows(point.at):
        return
    c.add(f'<g data-tip="{_attr(point.tip)}">{shape(point.kind, c.x(point.at), y)}</g>')


def _stripes(c: _Canvas, rows: int) -> None:
    for i in range(1, rows, 2):
        c.add(f'<rect x="0" y="{AXIS_H + i * ROW_H}" width="{LABEL_W + PLOT_W + PAD_R}" '
              f'height="{ROW_H}" fill="#f1f5f9"/>')


def _lane(c: _Canvas, lane: Lane, top: float) -> None:
    label = escape(lane.label) + ("" if lane.final_state is None else f" · {escape(lane.final_state)}")
    css = ' class="flagged"' if lane.flagged else ""
    c.add(f'<text x="6" y="{top + 14}"{css}>{"⚠ " if lane.flagged else ""}{label}</text>')
    for bar in lane.bars:
        if not c.shows(bar.start, bar.end):
            continue
        x0, x1 = c.x(bar.start), c.x(bar.end)
        c.add(f'<rect x="{x0}" y="{top + BAR_Y}" width="{max(x1 - x0, 1.5):.2f}" height="{BAR_H}" '
              f'rx="2" fill="{state_colour(bar.state)}"{FAINT if bar.final else ""} '
              f'data-tip="{_attr(bar.tip)}"/>')
    for call in lane.calls:
        _call(c, top + CALL_Y, call)
    for point in lane.points:
        _point(c, top + BAR_Y, point)


def render_svg(model: TimelineModel, lanes: list[Lane] | None = None,
               span: tuple[float, float] | None = None) -> str:
    """A chart: axis, fault windows, then the lanes (default: the harness lane and every job).

    ``span`` draws only that time range (seconds since the first event), for close-ups.
    """
    lanes = [model.harness, *model.jobs] if lanes is None else lanes
    height = AXIS_H + ROW_H * len(lanes) + 6
    c = _Canvas(*(span or (0.0, model.duration)))
    _stripes(c, len(lanes))
    _axis(c, height)
    _windows(c, model, height)  # under the lanes, so bars and marks keep their own hover
    for i, lane in enumerate(lanes):
        _lane(c, lane, AXIS_H + i * ROW_H)
    width = LABEL_W + PLOT_W + PAD_R
    return (f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
            f'role="img">{"".join(c.parts)}</svg>')
