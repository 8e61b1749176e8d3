"""How a nightly run submits one ticket (``[tool.jobquake.nightly] submit``), outside the app's package.

The app takes tickets through its own function, ``tickets.intake.open_ticket``
(its callers embed it); a nightly run calls it here in the harness's process
with the app's environment, as an embedding web process would. The app's
settings are read from the environment when needed, so it is filled once
from ``[tool.jobquake.env]`` with the stack's values.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

_lock = threading.Lock()
_env_for: dict[str, str] = {}


def _app_environment(values: dict[str, Any]) -> None:
    with _lock:
        if _env_for.get("database_url") == values["database_url"]:
            return
        from harness import config as cfg  # the app's [tool.jobquake.env], with this stack's values

        config = cfg.resolve(pyproject=Path(__file__).resolve().parent / "pyproject.toml")
        os.environ.update({name: str(template).format_map(values) for name, template in config.env.items()})
        _env_for["database_url"] = values["database_url"]


def submit(values: dict[str, Any], job: Any) -> str | None:
    """Open one ticket; its number."""
    _app_environment(values)
    from tickets.intake import open_ticket

    ticket_no = open_ticket(customer=f"{job.project} {job.index}", subject=job.file, messages=list(job.documents),
                            channel="email")
    return str(ticket_no)
