"""How a nightly run submits one job to refapp (``[tool.jobquake.nightly] submit``)."""
from __future__ import annotations

import threading
from typing import Any

import httpx

_clients: dict[str, httpx.Client] = {}
_lock = threading.Lock()


def _client(url: str) -> httpx.Client:
    with _lock:
        if url not in _clients:  # one pooled client per API address, shared by the submit threads
            _clients[url] = httpx.Client(base_url=url, timeout=10.0,
                                         limits=httpx.Limits(max_connections=64, max_keepalive_connections=64))
        return _clients[url]


def submit(values: dict[str, Any], job: Any) -> str | None:
    """POST /jobs as a user's browser would: the job id of an accepted upload, None if refused."""
    body = {"project": job.project, "file": job.file, "user": "nightly", "documents": list(job.documents)}
    answer = _client(values["api_url"]).post("/jobs", json=body)
    return answer.json().get("job_id") if answer.is_success else None
