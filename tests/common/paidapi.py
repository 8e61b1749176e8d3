"""A fake provider on a thread, its control client, and a model client for the tests."""
from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

import httpx

from harness.paidapi.control import PaidAPIControl
from harness.paidapi.threaded import ThreadedPaidAPI

# Tests run at 1/100 of real time with every call taking 1 real second: 10 ms.
TIME_SCALE = 0.01
PROFILE = "fixed:1"
CALL_TIMEOUT = 10.0  # seconds; a bound no healthy test call comes near


@dataclass
class ProviderBed:
    """The running fake provider and ways to talk to it."""

    server: ThreadedPaidAPI
    control: PaidAPIControl
    pool: ThreadPoolExecutor
    client: httpx.Client  # one pool of connections: a new client per call costs ~20 ms

    @property
    def url(self) -> str:
        return self.server.url

    def call(self, prompt: str = "a document", *, route: str = "/v1/generate",
             job_id: str | None = None, step: str | None = None, attempt: int | None = None,
             key: str | None = None, timeout: float = CALL_TIMEOUT) -> httpx.Response:
        """One model call as the app would make it (fields in headers)."""
        headers = {name: str(value) for name, value in (
            ("X-Job-Id", job_id), ("X-Step", step), ("X-Attempt", attempt),
            ("Idempotency-Key", key)) if value is not None}
        return self.client.post(f"{self.url}{route}", json={"prompt": prompt}, headers=headers,
                                timeout=timeout)

    def call_in_background(self, prompt: str = "a document", **fields: Any) -> Future[httpx.Response]:
        """Start ``call`` on a worker thread; the future holds its response."""
        return self.pool.submit(self.call, prompt, **fields)

    def record(self, call_id: int) -> dict[str, Any]:
        """The ledger record of one call."""
        (record,) = [r for r in self.control.ledger() if r["call_id"] == call_id]
        return record


@contextmanager
def paidapi_testbed(*, time_scale: float = TIME_SCALE, profile: str = PROFILE,
                    seed: int = 1) -> Iterator[ProviderBed]:
    """Start a provider; on exit stop it first (answering open calls), then the threads."""
    pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="model-client")
    try:
        with httpx.Client() as client, \
                ThreadedPaidAPI(time_scale=time_scale, profile=profile, seed=seed) as server, \
                PaidAPIControl(server.url) as control:
            yield ProviderBed(server, control, pool, client)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def openai_client(bed: ProviderBed, *, timeout: float = CALL_TIMEOUT, max_retries: int = 0) -> Any:
    """The official OpenAI client pointed at the fake provider (no retries unless asked)."""
    import openai

    return openai.OpenAI(base_url=f"{bed.url}/v1", api_key="sk-test", timeout=timeout,
                         max_retries=max_retries)


def anthropic_client(bed: ProviderBed, *, timeout: float = CALL_TIMEOUT, max_retries: int = 0) -> Any:
    """The official Anthropic client pointed at the fake provider (no retries unless asked)."""
    import anthropic

    return anthropic.Anthropic(base_url=bed.url, api_key="sk-ant-test", timeout=timeout,
                               max_retries=max_retries)
