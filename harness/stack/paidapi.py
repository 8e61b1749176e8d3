"""The fake paid model API as a local process (see ``harness.paidapi``).

Its control routes (``/_jobquake``: modes, gates, the ledger, reset) answer
only requests that carry the session's token, which the harness writes to a
file in the private run folder and its own client sends.
"""
from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from harness.stack.credentials import control_token, write_secret
from harness.stack.probe_http import probe_client
from harness.stack.process import ProcessService

if TYPE_CHECKING:
    from harness.paidapi.control import PaidAPIControl


class PaidAPIService(ProcessService):
    """``python -m harness.paidapi``: latency profile, modes, gates and the billing ledger."""

    scheme = "http"
    start_timeout = 15.0
    port_handover = True

    def __init__(self, *args: Any, seed: int, time_scale: float, profile: str = "default",
                 call_key: str = "", call_key_header: str = "Idempotency-Key",
                 prices: dict[str, Any] | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.seed = seed
        self.time_scale = time_scale
        self.profile = profile
        self.call_key = call_key
        self.call_key_header = call_key_header
        self.prices = prices or {}
        self.token = control_token()
        self.token_path = self.workdir / "control.token"

    secret_mode = 0o600

    def prepare(self) -> None:
        write_secret(self.token_path, self.token, self.secret_mode)

    def command(self) -> list[str]:
        where = ["--fd", self.listen_fd()] if self.port_handover else []
        return [sys.executable, "-m", "harness.paidapi", "--host", self.host, "--port", str(self.port), *where,
                "--seed", str(self.seed), "--time-scale", str(self.time_scale), "--profile", self.profile,
                "--call-key", self.call_key, "--call-key-header", self.call_key_header,
                "--prices", json.dumps(self.prices), "--token-file", self.token_file()]

    def token_file(self) -> str:
        """Where the server reads the token (a container sees it at its mount)."""
        return str(self.token_path)

    def probe(self) -> bool:
        return probe_client().get(f"{self.url}/_jobquake/health").is_success

    def after_ready(self) -> None:
        """Remember the session's settings: every reset brings them back."""
        self._session_settings = self.control().settings()
        self.control().expect_settings(self._session_settings)

    def reset(self) -> None:
        """The session's known state: no ledger, rules or gates, the session's settings."""
        control = self.control()
        control.reset()
        if control.settings() != self._session_settings:
            control.settings(**self._session_settings)

    def control(self) -> PaidAPIControl:
        """A client of this service, made once and reused (each holds a connection pool)."""
        if getattr(self, "_control", None) is None:
            from harness.paidapi.control import PaidAPIControl

            self._control = PaidAPIControl(self.url, token=self.token)
        return self._control
