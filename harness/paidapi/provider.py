"""The simulated provider: what happens to one model call, from accept to invoice.

Each accepted call is served in its own task that the HTTP handler only
awaits through ``asyncio.shield``: when the client hangs up, the handler is
cancelled but the generation runs on and is billed, as with real providers.

The order of decisions for one call:

1. the mode rule is chosen (``modes.py``);
2. ``hang`` answers nothing until the rule is removed; ``fail`` (immediate)
   answers at once; neither generates nor bills;
3. an ``Idempotency-Key`` already seen is replayed: a finished generation's
   result is returned at once, an unfinished one is awaited; nothing is
   billed again (a failed generation does not count: the key is free again);
4. otherwise the call generates: it waits at any matching gate (``held``),
   takes its latency (``in_flight``), then is billed (``done``) or, in fail
   mode with ``immediate=False``, fails; in ``hang_mid_stream`` mode it
   answers with ``stall`` set and is never billed (see ``modes.py``).

Billing records the tokens of the call and what they cost by the price
table (``pricing.py``).
"""
from __future__ import annotations

import asyncio
import hashlib
import random
from dataclasses import dataclass, field
from typing import Any

from harness.errors import ConfigError
from harness.paidapi.attribution import DEFAULT_KEY_HEADER, CallKeyPattern
from harness.paidapi.gates import GateTable
from harness.paidapi.ledger import CallRecord, Ledger
from harness.paidapi.modes import ModeTable, Rule
from harness.paidapi.pricing import JOBQUAKE_MODEL, PriceTable, count_tokens
from harness.paidapi.profile import LatencyProfile

# The fake model classifies documents: a stable hash of the prompt picks one.
CATEGORIES = ("invoice", "receipt", "contract", "letter", "report", "form", "other")


def output_for(prompt: str) -> str:
    """The deterministic "model output" for a prompt."""
    digest = hashlib.sha256(prompt.encode()).digest()
    return CATEGORIES[int.from_bytes(digest[:8], "big") % len(CATEGORIES)]


@dataclass(frozen=True)
class ModelRequest:
    """The fields of a model call the provider cares about."""

    route: str
    prompt: str
    job_id: str | None = None
    step: str | None = None
    attempt: int | None = None
    key: str | None = None  # Idempotency-Key
    format: str = "jobquake"
    model: str = JOBQUAKE_MODEL
    caller_pid: int | None = None
    attributed_by: str | None = None
    counts_output: bool = True  # False when the answer is not text (embeddings)
    # set when generation starts (past modes and gates): a stream sends its first events then
    started: asyncio.Event | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Answer:
    """What the provider sends back: HTTP status and JSON body.

    ``stall`` (hang_mid_stream) is set when the answer must stop half way
    and wait for it before the connection is cut.
    """

    status: int
    body: dict[str, Any]
    stall: asyncio.Event | None = None


class Provider:
    """Ledger, rules, gates and settings of one fake provider, and its call logic."""

    def __init__(self, *, time_scale: float = 1.0, seed: int | None = None,
                 profile: LatencyProfile | None = None, prices: PriceTable | None = None,
                 call_key: str = "", call_key_header: str = DEFAULT_KEY_HEADER) -> None:
        self.ledger = Ledger()
        self.prices = prices or PriceTable()
        self.call_key = CallKeyPattern(call_key) if call_key else None
        self.call_key_header = call_key_header or DEFAULT_KEY_HEADER
        self.modes = ModeTable()
        self.gates = GateTable()
        self.time_scale = time_scale
        self.seed = seed
        self.profile = profile or LatencyProfile.default()
        self._rng = random.Random(seed)
        self._by_key: dict[str, tuple[CallRecord, asyncio.Task[Answer]]] = {}
        self._serving: set[asyncio.Task[Answer]] = set()
        self.max_in_flight = 0
        self._stopping = asyncio.Event()

    # -- calls ---------------------------------------------------------------

    def accept(self, request: ModelRequest) -> tuple[CallRecord, asyncio.Task[Answer]]:
        """Record a call and start serving it; the task runs on if the client leaves."""
        rule = self.modes.choose(request.route, request.job_id)
        record = self.ledger.open(
            route=request.route, job_id=request.job_id, step=request.step,
            attempt=request.attempt, key=request.key, mode=rule.mode if rule else "normal",
            format=request.format, model=request.model, caller_pid=request.caller_pid,
            attributed_by=request.attributed_by,
            tokens_in=count_tokens(request.prompt),
        )
        task = asyncio.create_task(self._serve(request, record, rule))
        self._serving.add(task)
        task.add_done_callback(self._serving.discard)
        self.max_in_flight = max(self.max_in_flight, len(self._serving))
        return record, task

    def client_gone(self, record: CallRecord) -> None:
        """The client hung up before its answer was delivered."""
        self.ledger.update(record, client_gone=True)

    async def _serve(self, request: ModelRequest, record: CallRecord, rule: Rule | None) -> Answer:
        if rule is not None and rule.mode == "hang":
            self.ledger.update(record, state="hung")
            await rule.healed.wait()
            return self._fail(record, 503, "provider unavailable (hang healed)")
        if rule is not None and rule.mode == "fail" and rule.immediate:
            return self._fail(record, rule.status, "injected failure")
        if request.key is not None:
            earlier = self._by_key.get(request.key)
            if earlier is not None and not _failed(earlier[1]):
                return await self._replay(record, *earlier)
            # this very task is the generation a later call with the key will share
            self._by_key[request.key] = (record, _this_task())
        return await self._generate(request, record, rule)

    async def _replay(self, record: CallRecord, original: CallRecord,
                      generation: asyncio.Task[Answer]) -> Answer:
        self.ledger.update(record, replay_of=original.call_id)
        answer = await asyncio.shield(generation)  # never cancel the original's work
        if answer.stall is not None:
            return self._fail(record, 503, "the original generation stalled (hang_mid_stream)")
        if answer.status != 200:
            return self._fail(record, answer.status, str(answer.body.get("error")))
        self.ledger.finish(record, "replayed", 200)
        return Answer(200, {**answer.body, "call_id": record.call_id, "billed": False,
                            "replayed": True, "latency": record.latency})

    async def _generate(self, request: ModelRequest, record: CallRecord,
                        rule: Rule | None) -> Answer:
        if not await self._pass_gates(record):
            return self._fail(record, 503, "gate aborted: provider reset or shut down")
        latency = self.profile.sample(self._rng) * self.time_scale
        if rule is not None:
            latency = rule.adjust_latency(latency, self.time_scale)
        self.ledger.update(record, state="in_flight", latency=latency)
        if request.started is not None:
            request.started.set()
        if await self._stopped_within(latency):
            return self._fail(record, 503, "provider shut down during generation")
        if rule is not None and rule.mode == "fail":
            return self._fail(record, rule.status, "injected failure")
        output = output_for(request.prompt)
        tokens_out = count_tokens(output) if request.counts_output else 0
        body = {"call_id": record.call_id, "output": output, "billed": True, "replayed": False,
                "latency": latency, "tokens_in": record.tokens_in, "tokens_out": tokens_out}
        if rule is not None and rule.mode == "hang_mid_stream":
            return self._stall(record, rule, {**body, "billed": False})
        self.ledger.update(record, tokens_out=tokens_out, cost_usd=self.prices.cost(
            request.model, record.tokens_in, tokens_out))
        self.ledger.finish(record, "done", 200, billed=True)
        return Answer(200, body)

    def _stall(self, record: CallRecord, rule: Rule, body: dict[str, Any]) -> Answer:
        """Answer half way, then nothing until the rule is removed (never billed)."""
        self.ledger.update(record, state="hung")

        async def cut_when_healed() -> Answer:
            await rule.healed.wait()
            return self._fail(record, 200, "stream cut (hang_mid_stream healed)")

        task = asyncio.create_task(cut_when_healed())
        self._serving.add(task)
        task.add_done_callback(self._serving.discard)
        return Answer(200, body, stall=rule.healed)

    async def _pass_gates(self, record: CallRecord) -> bool:
        """Wait at every matching closed gate; False when a gate was aborted."""
        while (gate := self.gates.closed_gate_for(record)) is not None:
            gate.held.append(record.call_id)
            self.ledger.update(record, state="held")
            await gate.opened.wait()
            if gate.aborted:
                return False
        return True

    async def _stopped_within(self, seconds: float) -> bool:
        try:
            await asyncio.wait_for(self._stopping.wait(), seconds)
        except TimeoutError:
            return False
        return True

    def _fail(self, record: CallRecord, status: int, reason: str) -> Answer:
        self.ledger.finish(record, "failed", status)
        return Answer(status, {"call_id": record.call_id, "error": reason})

    # -- control -------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """Concurrency and totals since the last reset."""
        records = self.ledger.records()
        return {
            "in_flight": len(self._serving), "max_in_flight": self.max_in_flight,
            "calls": len(records), "billed": sum(r.billed for r in records),
        }

    def settings(self) -> dict[str, Any]:
        """The current settings as JSON."""
        return {"time_scale": self.time_scale, "seed": self.seed, "profile": self.profile.to_dict(),
                "prices": self.prices.to_dict(), "call_key_header": self.call_key_header,
                "call_key": self.call_key.template if self.call_key else ""}

    def configure(self, *, time_scale: float | None = None, seed: int | None = None,
                  profile: str | dict[str, Any] | None = None,
                  prices: dict[str, Any] | None = None, call_key: str | None = None,
                  call_key_header: str | None = None) -> None:
        """Change settings (all or nothing); a new seed restarts the latency sequence.

        ``prices`` overrides the built-in price table (``paidapi_prices`` shape);
        ``call_key`` / ``call_key_header`` set attribution by key ("" turns it off).
        """
        new_prices = PriceTable.from_config(prices) if prices is not None else self.prices
        new_key = self.call_key if call_key is None else (
            CallKeyPattern(str(call_key)) if call_key else None)
        self._configure_run(time_scale, seed, profile)  # validates before it changes anything
        self.prices, self.call_key = new_prices, new_key
        if call_key_header is not None:
            self.call_key_header = str(call_key_header) or DEFAULT_KEY_HEADER

    def _configure_run(self, time_scale: float | None, seed: int | None,
                       profile: str | dict[str, Any] | None) -> None:
        if time_scale is not None and not (isinstance(time_scale, (int, float)) and time_scale >= 0):
            raise ConfigError(f"time_scale must be >= 0, got {time_scale!r}", key="time_scale")
        if seed is not None and not isinstance(seed, int):
            raise ConfigError(f"seed must be an integer, got {seed!r}", key="seed")
        new_profile = LatencyProfile.from_dict(profile) if profile is not None else self.profile
        self.profile = new_profile
        if time_scale is not None:
            self.time_scale = float(time_scale)
        if seed is not None:
            self.seed = seed
            self._rng = random.Random(seed)

    def reset(self) -> None:
        """Forget calls, rules, gates and keys; held and hung calls are answered 503."""
        self.modes.clear()
        self.gates.abort_all()
        self._by_key.clear()
        self.ledger.clear()
        self.max_in_flight = len(self._serving)

    async def stop(self) -> None:
        """Answer every open call 503 (nothing generates further) and wait for them."""
        self._stopping.set()
        self.modes.clear()
        self.gates.abort_all()
        await asyncio.gather(*self._serving, return_exceptions=True)


def _this_task() -> asyncio.Task[Answer]:
    task = asyncio.current_task()
    assert task is not None, "only called from a serving task"
    return task


def _failed(generation: asyncio.Task[Answer]) -> bool:
    """A failed or stalled generation was never billed: its key is free again."""
    return generation.done() and (generation.result().status != 200
                                  or generation.result().stall is not None)
