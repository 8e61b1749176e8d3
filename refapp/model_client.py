"""The paid model API: one call, one deadline, and a timeout that says it is a timeout.

Every call carries the deadline from the budget table, or the one set in
``REFAPP_MODEL_DEADLINE_S`` (real seconds, time-scaled like every budget),
a stable ``Idempotency-Key`` chosen by the caller, and the job, step and
attempt it belongs to, so the provider's ledger can be read against ours.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass

import httpx

from refapp import budgets, settings
from refapp.mutants import mutant

log = logging.getLogger(__name__)

ROUTE = "/v1/generate"


class ModelError(Exception):
    """The provider did not give us an answer (it failed, or could not be reached)."""


class ModelTimeout(ModelError):
    """The provider did not answer within the per-call deadline."""


@dataclass(frozen=True)
class ModelAnswer:
    """What the provider answered."""

    output: str
    call_id: str | None
    replayed: bool


def model_deadline() -> float:
    """Seconds one model call may take: the configured setting, else the budget table's."""
    configured = settings.get().model_deadline_s
    if configured is None or mutant("dead-config-deadline"):
        return budgets.scaled("model_call")  # the wrong shape (mutant): the setting is never read
    return configured * settings.get().time_scale


def call_timeout() -> float | None:
    """The timeout one model call is made with (None: none at all)."""
    return None if mutant("no-deadline") else model_deadline()


_clients: dict[int, httpx.Client] = {}


def _client() -> httpx.Client:
    client = _clients.get(os.getpid())
    if client is None:
        client = httpx.Client(base_url=settings.get().paidapi_url)
        _clients[os.getpid()] = client
    return client


def generate(prompt: str, *, key: str, job_id: str, step: str, attempt: int) -> ModelAnswer:
    """Ask the model; ModelTimeout past the deadline, ModelError for any other failure."""
    deadline = model_deadline()
    # connect, write, read and pool all bounded; the answer is one small JSON body
    bound = call_timeout()
    timeout = None if bound is None else httpx.Timeout(bound)
    headers = {"Idempotency-Key": key, "X-Job-Id": job_id, "X-Step": step, "X-Attempt": str(attempt),
               "X-Caller-Pid": str(os.getpid())}  # lets a harness tell which process holds the call
    try:
        response = _post(headers, prompt, timeout)
    except httpx.TimeoutException as exc:
        if mutant("timeout-unlabelled"):
            raise ModelError(f"provider call failed: {exc!r}") from exc  # the wrong shape
        raise ModelTimeout(f"model call exceeded {deadline:g}s") from exc
    except httpx.HTTPError as exc:
        raise ModelError(f"provider unreachable: {exc!r}") from exc
    if response.status_code != 200:
        raise ModelError(f"provider returned {response.status_code}: {_error_text(response)}")
    body = response.json()
    return ModelAnswer(output=str(body["output"]), call_id=_str_or_none(body.get("call_id")),
                       replayed=bool(body.get("replayed")))


# A timed-out call is not retried here: the item fails as a timeout and the job's own retry
# (the SQS path's next attempt) decides, so no document waits more than one deadline per attempt.
TIMED_OUT_RETRIES = 2  # mutant retry-timed-out-call only


def _post(headers: dict[str, str], prompt: str, timeout: httpx.Timeout | None) -> httpx.Response:
    retry = 0
    while True:
        try:
            return _client().post(ROUTE, json={"prompt": prompt}, headers=headers, timeout=timeout)
        except httpx.TimeoutException:
            if retry == TIMED_OUT_RETRIES or not mutant("retry-timed-out-call"):
                raise
            retry += 1
            log.warning("model call timed out; retrying (%d of %d)", retry, TIMED_OUT_RETRIES)  # the wrong shape


def _error_text(response: httpx.Response) -> str:
    try:
        return str(response.json().get("error", ""))[:200]
    except ValueError:
        return response.text[:200]


def _str_or_none(value: object) -> str | None:
    return None if value is None else str(value)
