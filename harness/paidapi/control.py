"""``PaidAPIControl``: the harness's client for the fake provider's control API.

Every request has a timeout; a non-2xx answer or a transport failure raises
``PaidAPIError`` carrying the status and body, so a broken fake never looks
like a quiet success.
"""
from __future__ import annotations

from types import TracebackType
from typing import Any, cast

import httpx

from harness.errors import HarnessError, WaitTimeout

__all__ = ["Gate", "PREFIX", "PaidAPIControl", "PaidAPIError", "PaidAPIWaitTimeout", "Rule"]

PREFIX = "/_jobquake"


class PaidAPIError(HarnessError):
    """The control API answered non-2xx (``status``, ``body``) or could not be reached."""

    def __init__(self, message: str, *, status: int | None = None, body: Any = None):
        super().__init__(message if status is None else f"{message}: HTTP {status} {body}")
        self.status = status
        self.body = body


class PaidAPIWaitTimeout(PaidAPIError, WaitTimeout):
    """A long-poll ended with 408: nothing matching happened in time."""


class Rule:
    """A mode rule in place; ``heal()`` (or leaving the ``with`` block) removes it."""

    def __init__(self, control: PaidAPIControl, spec: dict[str, Any]):
        self.control = control
        self.spec = spec
        self.rule_id: int = spec["rule_id"]

    def heal(self) -> None:
        """Remove the rule (hung calls are answered 503). Idempotent."""
        self.control._request("DELETE", f"/modes/{self.rule_id}", missing_ok=True)

    def __enter__(self) -> Rule:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.heal()

    def __repr__(self) -> str:
        return f"Rule({self.spec})"


class Gate:
    """A gate in place: matching calls are held before generation until ``heal()``.

    A control, not a fault: a gate is not recorded in the history as a fault;
    ``with`` heals it on the way out, and the stack's reset between tests
    removes any left.
    """

    DEFAULT_WAIT = 10.0  # seconds ``wait()`` waits when not told

    def __init__(self, control: PaidAPIControl, spec: dict[str, Any]):
        self.control = control
        self.spec = spec
        self.gate_id: int = spec["gate_id"]

    def wait(self, timeout: float | None = None) -> dict[str, Any]:
        """Block until the gate holds a call; return that call's record.

        ``PaidAPIWaitTimeout`` (a ``WaitTimeout``) when none is held within ``timeout``.
        """
        timeout = self.DEFAULT_WAIT if timeout is None else timeout
        return cast("dict[str, Any]", self.control._request(
            "GET", f"/gates/{self.gate_id}/held", params={"timeout": timeout}, wait=timeout))

    def heal(self) -> None:
        """Open and remove the gate: held calls go on, later ones pass. Idempotent."""
        self.control._request("DELETE", f"/gates/{self.gate_id}", missing_ok=True)

    def __enter__(self) -> Gate:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.heal()

    def __repr__(self) -> str:
        return f"Gate({self.spec})"


class PaidAPIControl:
    """Drive a fake provider at ``base_url`` (e.g. ``http://127.0.0.1:20123``)."""

    def __init__(self, base_url: str, timeout: float = 5.0):
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._http = httpx.Client(base_url=self.base_url + PREFIX, timeout=timeout)

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._http.close()

    def __enter__(self) -> PaidAPIControl:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # -- calls ---------------------------------------------------------------

    def health(self) -> bool:
        """True when the provider answers its health check."""
        return bool(self._request("GET", "/health")["ok"])

    def stats(self) -> dict[str, Any]:
        """``in_flight``, ``max_in_flight``, ``calls``, ``billed`` since the last reset."""
        return cast("dict[str, Any]", self._request("GET", "/stats"))

    def ledger(self, job_id: str | None = None, *, state: str | None = None,
               after: int | None = None) -> list[dict[str, Any]]:
        """Call records, oldest first, optionally for one job and/or in one state, or above call id ``after``."""
        params = _params(job_id=job_id, state=state, after=after)
        return cast("list[dict[str, Any]]", self._request("GET", "/ledger", params=params))

    def calls_for(self, job_id: str) -> list[dict[str, Any]]:
        """Every call made for ``job_id``."""
        return self.ledger(job_id)

    def billed(self, job_id: str | None = None) -> list[dict[str, Any]]:
        """The billed calls (of one job, or all)."""
        return self.ledger(job_id, state="billed")

    def wait_for_call(self, job_id: str | None = None, step: str | None = None,
                      state: str = "in_flight", timeout: float = 10.0, *,
                      attempt: int | None = None, route: str | None = None,
                      after: int | None = None) -> dict[str, Any]:
        """Block until a matching call is in ``state`` (or any state with "any", or
        billed with "billed"); return its record. ``after`` skips call ids <= it.
        Raises PaidAPIWaitTimeout when none shows up within ``timeout``."""
        params = _params(job_id=job_id, step=step, state=state, attempt=attempt,
                         route=route, after=after, timeout=timeout)
        return cast("dict[str, Any]", self._request("GET", "/wait", params=params, wait=timeout))

    # -- modes and gates -----------------------------------------------------

    def set_mode(self, mode: str, *, route: str | None = None, job_id: str | None = None,
                 status: int | None = None, factor: float | None = None,
                 seconds: float | None = None, count: int | None = None,
                 immediate: bool = True) -> Rule:
        """Add a mode rule (see ``harness.paidapi.modes``); returns it, ready to heal.

        Not a fault: the rule is not recorded in the history and not healed
        before the verdict. A scenario that makes the provider misbehave
        uses ``jq.faults.hang_endpoint`` / ``jq.faults.paid_api_mode``.
        """
        spec = _params(mode=mode, route=route, job_id=job_id, status=status, factor=factor,
                       seconds=seconds, count=count)
        spec["immediate"] = immediate
        return Rule(self, self._request("POST", "/modes", json=spec))

    def modes(self) -> list[dict[str, Any]]:
        """The rules in place."""
        return cast("list[dict[str, Any]]", self._request("GET", "/modes"))

    def clear_modes(self) -> None:
        """Remove every rule (hung calls are answered 503)."""
        self._request("DELETE", "/modes")

    def gate(self, *, job_id: str | None = None, step: str | None = None,
             route: str | None = None) -> Gate:
        """Hold every matching call before generation until the gate is healed (a control, not a fault)."""
        spec = _params(job_id=job_id, step=step, route=route)
        return Gate(self, self._request("POST", "/gates", json=spec))

    def gates(self) -> list[dict[str, Any]]:
        """The gates in place."""
        return cast("list[dict[str, Any]]", self._request("GET", "/gates"))

    # -- reset and settings --------------------------------------------------

    def reset(self) -> None:
        """Clear ledger, rules and gates; held and hung calls are answered 503."""
        self._request("POST", "/reset")

    def settings(self, **changes: Any) -> dict[str, Any]:
        """Read the settings, or change ``time_scale`` / ``seed`` / ``profile`` first."""
        if not changes:
            return cast("dict[str, Any]", self._request("GET", "/settings"))
        return cast("dict[str, Any]", self._request("POST", "/settings", json=changes))

    # -- transport -----------------------------------------------------------

    def _request(self, method: str, path: str, *, params: dict[str, Any] | None = None,
                 json: Any = None, wait: float = 0.0, missing_ok: bool = False) -> Any:
        """One request; ``wait`` extends the timeout of a long-poll by its own duration."""
        url = f"{self.base_url}{PREFIX}{path}"
        try:
            response = self._http.request(method, path, params=params, json=json,
                                          timeout=self.timeout + wait)
        except httpx.HTTPError as exc:
            raise PaidAPIError(f"{method} {url} failed: {type(exc).__name__}: {exc}") from exc
        if response.status_code == 404 and missing_ok:
            return None
        if response.is_success:
            return response.json()
        body = _body(response)
        error = PaidAPIWaitTimeout if response.status_code == 408 else PaidAPIError
        raise error(f"{method} {url}", status=response.status_code, body=body)


def _params(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _body(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text
