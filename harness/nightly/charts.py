"""Inline SVG line charts over the run's time, with each fault's window shaded and labelled."""
from __future__ import annotations

from html import escape
from typing import Any

from harness.report.svg import FAULT, nice_step

W, H, LEFT, TOP, BOTTOM = 1100, 220, 60, 18, 24
LANE_H = 13  # one label lane per overlapping fault
CHAR_W = 8.0  # px per character of an 11 px label (generous), to keep labels apart


def _x(t: float, span: float) -> float:
    return round(LEFT + t / max(span, 1e-9) * (W - LEFT - 10), 2)


def _lanes(windows: list[dict[str, Any]], span: float) -> list[int]:
    """A label lane per window, so that labels (wider than short windows) never overlap."""
    ends: list[float] = []  # per lane, the x where its last label ends
    lanes = []
    for w in windows:
        x0 = _x(w["injected_at"], span)
        lane = next((i for i, end in enumerate(ends) if end < x0), len(ends))
        if lane == len(ends):
            ends.append(0.0)
        ends[lane] = x0 + CHAR_W * len(w["label"]) + 6
        lanes.append(lane)
    return lanes


def _windows_svg(windows: list[dict[str, Any]], span: float, plot_top: float, plot_h: float) -> list[str]:
    shown = [w for w in windows if w.get("injected_at") is not None]
    parts = []
    for w, lane in zip(shown, _lanes(shown, span)):
        x0 = _x(w["injected_at"], span)
        x1 = _x(w["healed_at"] if w["healed_at"] is not None else span, span)
        tip = f"{w['label']}: {w['injected_at']:.1f}s to {w['healed_at'] or span:.1f}s"
        parts.append(f'<rect x="{x0}" y="{plot_top}" width="{max(x1 - x0, 1.5):.2f}" height="{plot_h}" '
                     f'fill="{FAULT}" fill-opacity="0.15" stroke="{FAULT}" stroke-opacity="0.5">'
                     f'<title>{escape(tip)}</title></rect>')
        parts.append(f'<text x="{x0 + 2}" y="{plot_top + 10 + lane * LANE_H}" fill="#c2410c">'
                     f'{escape(w["label"])}</text>')
    return parts


def line_chart(title: str, rows: list[dict[str, Any]], lines: dict[str, str], windows: list[dict[str, Any]],
               span: float, unit: str) -> str:
    """One chart: ``lines`` maps a row key to its colour; rows carry ``t`` and ``width``."""
    values = [r[k] for r in rows for k in lines if r.get(k) is not None]
    top = max(values, default=1.0) or 1.0
    plot_top, plot_h = TOP, H - TOP - BOTTOM
    y = lambda value: round(plot_top + plot_h * (1 - value / (top * 1.35)), 2)  # noqa: E731
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}">',
             f'<text x="{LEFT}" y="12" font-weight="600">{escape(title)}</text>']
    step = nice_step(span, 10)
    for i in range(int(span / step) + 1):
        x = _x(i * step, span)
        parts.append(f'<line x1="{x}" y1="{plot_top}" x2="{x}" y2="{H - BOTTOM}" stroke="#e2e8f0"/>'
                     f'<text x="{x}" y="{H - 8}" text-anchor="middle">{i * step:g}s</text>')
    for frac in (0, 0.5, 1):
        value = top * frac
        parts.append(f'<text x="{LEFT - 4}" y="{y(value) + 4}" text-anchor="end">{value:.3g}{unit}</text>')
    parts += _windows_svg(windows, span, plot_top, plot_h)
    for key, colour in lines.items():
        points = " ".join(f"{_x(r['t'] + r['width'] / 2, span)},{y(r[key])}" for r in rows if r.get(key) is not None)
        if points:
            parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="1.6"/>')
    x = LEFT + 10 * len(title) + 20
    for key, colour in lines.items():  # the legend, after the title
        parts.append(f'<line x1="{x}" y1="8" x2="{x + 16}" y2="8" stroke="{colour}" stroke-width="2"/>'
                     f'<text x="{x + 20}" y="12">{escape(key)}</text>')
        x += 30 + CHAR_W * len(key)
    parts.append("</svg>")
    return "".join(parts)


def bucket_span(rows: list[dict[str, Any]]) -> float:
    return max((r["t"] + r["width"] for r in rows), default=1.0) if rows else 1.0

