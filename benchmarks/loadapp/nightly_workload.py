"""How a nightly run submits one job (``[tool.jobquake.nightly] submit``): ``POST /jobs``.

One keep-alive connection per submitting thread, with the standard
library's client: this runs in the harness's process, so it is kept cheap.
"""
from __future__ import annotations

import http.client
import json
import threading
from typing import Any
from urllib.parse import urlsplit

_local = threading.local()


def _connection(url: str) -> http.client.HTTPConnection:
    conn = getattr(_local, "conn", None)
    if conn is None:
        parts = urlsplit(url)
        conn = _local.conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    return conn


def submit(values: dict[str, Any], job: Any) -> str | None:
    """The job id of an accepted job, None if the app refused it; raises when the answer was lost."""
    conn = _connection(values["api_url"])
    body = json.dumps({"file": job.file, "documents": list(job.documents)})
    try:
        conn.request("POST", "/jobs", body, {"Content-Type": "application/json"})
        answer = conn.getresponse()
        data = answer.read()
    except BaseException:
        conn.close()
        _local.conn = None
        raise
    return json.loads(data)["job_id"] if answer.status == 202 else None
