"""The inline CSS and JS of the HTML report (no external assets: the file travels alone)."""
from __future__ import annotations

import hashlib

STATE_COLOURS = {
    "submitted": "#cbd5e1", "created": "#cbd5e1", "pending": "#cbd5e1", "queued": "#94a3b8",
    "scheduled": "#94a3b8", "retrying": "#a78bfa", "running": "#3b82f6", "processing": "#3b82f6",
    "in_progress": "#3b82f6", "started": "#3b82f6", "done": "#22c55e", "succeeded": "#22c55e",
    "failed": "#ef4444", "needs_human": "#f59e0b", "cancelled": "#64748b",
}
# no greens or reds here: those mean "done" and "failed" to a reader
_SPARE = ("#0ea5e9", "#8b5cf6", "#14b8a6", "#6366f1", "#e879f9", "#0891b2")


def state_colour(state: str) -> str:
    """A fixed colour for known states; a stable pick from a spare palette for others."""
    if state in STATE_COLOURS:
        return STATE_COLOURS[state]
    return _SPARE[int(hashlib.sha1(state.encode()).hexdigest(), 16) % len(_SPARE)]


CSS = """
body { font: 13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 16px 24px; color: #0f172a; }
h1 { font-size: 18px; margin: 0 0 4px; } h2 { font-size: 15px; margin: 18px 0 6px; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 9px; font-weight: 600; color: #fff; }
.valid { background: #16a34a; } .invalid { background: #dc2626; } .unknown { background: #d97706; }
table.verdict { border-collapse: collapse; margin: 6px 0; }
table.verdict td, table.verdict th { border-bottom: 1px solid #e2e8f0; padding: 3px 10px 3px 0; text-align: left; vertical-align: top; }
td.mark { font-size: 15px; width: 20px; } td.mark.valid { color: #16a34a; background: none; }
td.mark.invalid { color: #dc2626; background: none; } td.mark.unknown { color: #d97706; background: none; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 8px 0; align-items: center; }
.legend svg { vertical-align: middle; }
.chart { overflow-x: auto; border: 1px solid #e2e8f0; border-radius: 4px; }
pre { background: #f8fafc; border: 1px solid #e2e8f0; padding: 8px; white-space: pre-wrap; font-size: 12px; }
.meta { color: #475569; }
#tip { position: fixed; display: none; pointer-events: none; background: #0f172a; color: #f8fafc;
       padding: 6px 8px; border-radius: 4px; font: 12px/1.35 ui-monospace, monospace; white-space: pre;
       max-width: 520px; z-index: 10; box-shadow: 0 2px 8px rgba(0,0,0,.3); }
svg text { font: 11px system-ui, sans-serif; fill: #334155; }
svg text.flagged { fill: #b91c1c; font-weight: 600; }
svg [data-tip] { cursor: default; } svg [data-tip]:hover { opacity: .75; }
"""

JS = """
(function () {
  var tip = document.getElementById('tip');
  document.addEventListener('mouseover', function (e) {
    var el = e.target.closest && e.target.closest('[data-tip]');
    if (!el) { tip.style.display = 'none'; return; }
    tip.textContent = el.getAttribute('data-tip');
    tip.style.display = 'block';
  });
  document.addEventListener('mousemove', function (e) {
    if (tip.style.display !== 'block') return;
    var x = e.clientX + 14, y = e.clientY + 14;
    if (x + tip.offsetWidth > window.innerWidth) x = e.clientX - tip.offsetWidth - 10;
    if (y + tip.offsetHeight > window.innerHeight) y = e.clientY - tip.offsetHeight - 10;
    tip.style.left = x + 'px'; tip.style.top = y + 'px';
  });
})();
"""
