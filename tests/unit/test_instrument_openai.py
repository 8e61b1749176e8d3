"""The official openai client's calls are tagged by the instrumentation (openai >= 3 sends through httpx2)."""
from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading

from harness.instrument import BOOT_DIR, ENV_DIR, ENV_PAIDAPI_URL

CLIENT = """
import openai
client = openai.OpenAI(base_url="{url}/v1", api_key="k", max_retries=0)
try:
    client.chat.completions.create(model="m", messages=[{{"role": "user", "content": "hi"}}])
except openai.APIStatusError:
    pass
"""


def test_a_call_through_the_openai_client_carries_the_callers_pid(tmp_path):
    seen: list[dict] = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            seen.append(dict(self.headers))
            self.send_response(500)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(json.dumps({"error": {"message": "no"}}).encode())

        def log_message(self, *args) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}"
    try:
        env = {**os.environ, ENV_DIR: str(tmp_path), ENV_PAIDAPI_URL: url, "PYTHONPATH": str(BOOT_DIR)}
        proc = subprocess.run([sys.executable, "-c", CLIENT.format(url=url)], env=env, capture_output=True,
                              text=True, timeout=60)
    finally:
        server.shutdown()
    assert proc.returncode == 0, proc.stderr
    assert len(seen) == 1
    assert seen[0].get("X-Caller-Pid", "").isdigit(), seen[0]
