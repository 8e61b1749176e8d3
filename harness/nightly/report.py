"""The nightly's report: ``nightly.json`` (figures, faults, verdict) and ``report.html``."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.nightly.runner import Outcome


def summary(outcome: Outcome) -> dict[str, Any]:
    """Everything the report shows, as JSON values."""
    status = outcome.driven.status
    return {
        "seed": outcome.schedule.seed,
        "shard": outcome.schedule.shard,
        "schedule": outcome.schedule.to_dict(),
        "valid": outcome.verdict.valid,
        "exit_code": outcome.exit_code,
        "verdict": outcome.verdict.to_dict(),
        "wall_s": outcome.driven.wall_s,
        "check_s": outcome.check_s,
        "jobs": {"submitted": outcome.driven.submitted, "accepted": outcome.driven.accepted,
                 "done": status.done, "failed": status.failed, "in_flight": status.in_flight,
                 "stuck": status.stuck, "duplicate_calls": status.duplicate_calls},
        "faults": [w.to_dict() for w in outcome.driven.windows],
        "artifacts": str(outcome.artifacts),
        **outcome.extra,
    }


def write_report(outcome: Outcome, out: Path) -> Path:
    """Write nightly.json and report.html into ``out``; the HTML's path."""
    data = summary(outcome)
    (out / "nightly.json").write_text(json.dumps(data, indent=1, default=str))
    html = out / "report.html"
    html.write_text(f"<!doctype html><pre>{json.dumps(data['jobs'])}</pre>")
    return html
