"""The nightly's report: ``nightly.json`` and one self-contained ``report.html``.

The JSON holds everything the page shows (so ``jobquake merge`` can build
one report from several shards): the schedule, the verdict with its
counterexamples, the job figures, throughput and latency per time bucket,
and per fault: injected, landed, jobs affected, recovery time. The page
draws throughput and p50 / p99 latency over time with every fault's window
shaded and labelled; the job timelines of the counterexamples are in the
run's ``timeline.html``, linked from the page.
"""
from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from harness.checks.result import mark
from harness.nightly.charts import line_chart
from harness.nightly.nemesis import SOURCE
from harness.nightly.runner import Outcome
from harness.nightly.stats import fault_effects, job_lives, percentile, series
from harness.report.html_assets import CSS


def summary(outcome: Outcome) -> dict[str, Any]:
    """Everything the report shows, as JSON values."""
    status, driven = outcome.driven.status, outcome.driven
    terminal = outcome.snapshot.terminal_states if outcome.snapshot else ("done", "failed", "needs_human")
    lives = job_lives(outcome.history, driven.started, terminal)
    span = max(outcome.schedule.duration, max((life.completed or 0.0 for life in lives), default=0.0))
    faults = []
    for window in driven.windows:
        data = window.to_dict()
        data.update(fault_effects(data, lives, outcome.history, driven.started))
        faults.append(data)
    latencies = [life.completed - life.accepted for life in lives if life.completed is not None]
    return {
        "seed": outcome.schedule.seed, "shard": outcome.schedule.shard, "valid": outcome.verdict.valid,
        "exit_code": outcome.exit_code, "wall_s": driven.wall_s, "check_s": outcome.check_s,
        "schedule": outcome.schedule.to_dict(), "verdict": outcome.verdict.to_dict(),
        "jobs": {"submitted": driven.submitted, "accepted": driven.accepted, "done": status.done,
                 "failed": status.failed, "in_flight": status.in_flight, "stuck": status.stuck,
                 "duplicate_calls": status.duplicate_calls,
                 # jobs a fault may have lost on the way while a defence was off: judged from its return
                 "in_transit": len({e.job_id for e in outcome.history.by_source(SOURCE, "in_transit")}),
                 "throughput": _throughput_over_run(lives, outcome.schedule.duration),
                 "p50_s": _pct(latencies, 50), "p99_s": _pct(latencies, 99)},
        "series": series(lives, span), "faults": faults, "artifacts": str(outcome.artifacts),
        **outcome.extra,
    }


def _throughput_over_run(lives: list, duration: float) -> float:
    """Jobs completed per second while the workload ran (completions after it are the backlog draining)."""
    within = sum(1 for life in lives if life.completed is not None and life.completed <= duration)
    return round(within / max(duration, 1e-9), 3)


def _pct(values: list[float], q: float) -> float | None:
    found = percentile(values, q)
    return None if found is None else round(found, 3)


def write_report(outcome: Outcome, out: Path) -> Path:
    """Write nightly.json and report.html into ``out``; the HTML's path."""
    data = summary(outcome)
    (out / "nightly.json").write_text(json.dumps(data, indent=1, default=str))
    return write_html([data], out / "report.html", timeline=Path(outcome.artifacts) / "timeline.html")


# -- the page ---------------------------------------------------------------------------------
def _fault_rows(faults: list[dict[str, Any]]) -> str:
    def cell(value: Any) -> str:
        return "–" if value is None else escape(str(value))
    rows = ["<tr><th>#</th><th>fault</th><th>planned</th><th>injected</th><th>healed</th><th>landed</th>"
            "<th>jobs affected</th><th>retried</th><th>recovery</th><th>spec</th></tr>"]
    for f in faults:
        landed = "yes" if f.get("landed") else ("not injected: " + escape(f.get("error") or "") if not
                                                  f.get("injected") else "no evidence")
        rows.append(f"<tr><td>{f.get('shard_prefix', '')}{f['index']}</td><td>{escape(f['label'])}</td>"
                    f"<td>{f['planned_at']}s +{f['planned_lasts']}s</td><td>{cell(f['injected_at'])}</td>"
                    f"<td>{cell(f['healed_at'])}</td><td>{landed}</td><td>{f.get('jobs_affected', 0)}</td>"
                    f"<td>{f.get('retried', 0)}</td><td>{cell(f.get('recovery_s'))}"
                    f"{'s' if f.get('recovery_s') is not None else ''}</td>"
                    f"<td><code>{escape(json.dumps(f['spec']))}</code></td></tr>")
    return '<table class="verdict">' + "".join(rows) + "</table>"


def _invariants(verdict: dict[str, Any]) -> str:
    parts = []
    for r in verdict.get("results", []):
        word = mark(r["valid"])
        parts.append(f'<h3><span class="badge {word}">{word}</span> {escape(r["name"])}</h3>'
                     f"<p>{escape(r['message'])}</p>")
        if r.get("counterexample"):
            parts.append(f"<pre>{escape(json.dumps(r['counterexample'], indent=1, default=str)[:4000])}</pre>")
    return "".join(parts)


def _throughput(data: dict[str, Any], span: float) -> str:
    return line_chart("throughput: jobs completed per second", data["series"], {"throughput": "#2563eb"},
                      data["faults"], span, "/s")


def _latency(data: dict[str, Any], span: float) -> str:
    return line_chart("latency, accepted to terminal: p50 and p99", data["series"],
                      {"p50": "#16a34a", "p99": "#dc2626"}, data["faults"], span, "s")


def _section(data: dict[str, Any]) -> str:
    span = data["schedule"]["duration"]
    span = max([span, *(r["t"] + r["width"] for r in data["series"])])
    title = f"shard {data['shard']} (seed {data['seed']})" if data.get("shard") else f"seed {data['seed']}"
    jobs = data["jobs"]
    word = mark(data["valid"])
    return (f'<h2><span class="badge {word}">{word}</span> {escape(title)}</h2>'
            f'<p class="meta">{jobs["accepted"]} jobs accepted, {jobs["done"]} done, {jobs["failed"]} failed, '
            f'{jobs["stuck"]} stuck{_in_transit(jobs)}, {jobs["duplicate_calls"]} billed twice; throughput {jobs["throughput"]}/s, '
            f'latency p50 {jobs["p50_s"]}s p99 {jobs["p99_s"]}s; end-of-run check {data["check_s"]}s</p>'
            f'<div class="chart">{_throughput(data, span)}</div><div class="chart">{_latency(data, span)}</div>'
            f"<h2>faults</h2>{_fault_rows(data['faults'])}<h2>invariants</h2>{_invariants(data['verdict'])}")


def _in_transit(jobs: dict[str, Any]) -> str:
    lost = jobs.get("in_transit") or 0  # absent from runs stored before it was counted
    return f" ({lost} lost on the way while a defence was off, judged from its return)" if lost else ""


def write_html(runs: list[dict[str, Any]], path: Path, timeline: Path | None = None) -> Path:
    """One page for one run or several shards."""
    from harness.checks.result import merge_valid

    overall = mark(merge_valid(r["valid"] for r in runs))
    what = "job timelines of the counterexamples" if any(r["valid"] is False for r in runs) else "job timelines"
    link = f'<p>{what}: <a href="{escape(str(timeline))}">{escape(str(timeline))}</a></p>' if timeline else ""
    body = "".join(_section(r) for r in runs)
    path.write_text(f'<!doctype html><html><head><meta charset="utf-8"><title>jobquake nightly: {overall}</title>'
                    f"<style>{CSS}</style></head><body><h1>jobquake nightly "
                    f'<span class="badge {overall}">{overall}</span></h1>{link}{body}</body></html>')
    return path
