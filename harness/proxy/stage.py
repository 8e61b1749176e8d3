"""A stage: one toxic attached to one direction of one live connection.

A stage is Toxiproxy's "toxic stub": the toxic plus the per-connection state
it needs (bytes sent so far, the bandwidth debt...). Chunks pass through the
active stages in order; a stage hands a chunk on with ``await emit(chunk)``,
may hold it, slice it, drop it, or end the pipe. Whether a stage is active
was decided once, from the toxic's toxicity, when it was attached; an
inactive stage lets everything through.

A stage that is waiting wakes up when its toxic is updated or removed.
"""
from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from harness.proxy.toxics import Toxic


@dataclass
class Chunk:
    """Bytes read from the source, stamped with the loop time they arrived."""

    data: bytes
    stamp: float


Emit = Callable[[Chunk], Awaitable[None]]


class PipeControl(Protocol):
    """What a stage may do to the pipe it is attached to."""

    def close(self) -> None:
        """End this direction: close the destination (a FIN after pending data)."""

    def reset(self) -> None:
        """Reset the whole connection (RST to both peers)."""


class Stage:
    """A toxic attached to one pipe. The base class lets everything through."""

    def __init__(self, toxic: Toxic, active: bool, rng: random.Random):
        self.toxic = toxic
        self.active = active
        self.rng = rng
        self.removed = False
        self.position = 0  # index in the chain when removed, to resume after it
        self.pipe: PipeControl | None = None
        self._wake = asyncio.Event()

    @property
    def attrs(self) -> dict[str, int]:
        return self.toxic.attributes

    def start(self, pipe: PipeControl) -> None:
        """The stage is in the pipe's chain from now on."""
        self.pipe = pipe

    def updated(self) -> None:
        """The toxic's attributes or toxicity changed."""
        self._interrupt()

    def detach(self, position: int) -> None:
        """The toxic was removed from the proxy."""
        self.removed = True
        self.position = position
        self._interrupt()

    def pipe_closed(self) -> None:
        """The pipe ended: release timers."""

    async def process(self, chunk: Chunk, emit: Emit) -> None:
        await emit(chunk)

    async def finish(self) -> None:
        """The source has ended; return when the close may go on down the chain."""

    async def sleep(self, seconds: float | None) -> bool:
        """Wait ``seconds`` (None: forever); True if woken early by an update or removal."""
        wake = self._wake
        if seconds is not None and seconds <= 0:
            return False
        try:
            await asyncio.wait_for(wake.wait(), seconds)
        except TimeoutError:
            return False
        return True

    def _interrupt(self) -> None:
        # Sleepers hold the old event; later sleeps get a fresh one.
        wake, self._wake = self._wake, asyncio.Event()
        wake.set()
