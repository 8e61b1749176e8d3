"""What each toxic does to a live connection: the seven Toxiproxy toxics as stages.

As in Toxiproxy, a removed latency/bandwidth/slicer stage lets what it holds
go on at once, and a removed timeout stage closes the connection.
"""
from __future__ import annotations

import asyncio
import random

from harness.proxy.stage import Chunk, Emit, PipeControl, Stage
from harness.proxy.toxics import Toxic


class LatencyStage(Stage):
    """Delays each chunk by latency ± jitter from the moment it was read."""

    async def process(self, chunk: Chunk, emit: Emit) -> None:
        jitter = self.attrs["jitter"]
        delay_ms = self.attrs["latency"] + (self.rng.randrange(-jitter, jitter) if jitter else 0)
        release = chunk.stamp + delay_ms / 1000
        # Woken early (update/removal): pass the chunk on now, as Toxiproxy does.
        await self.sleep(release - asyncio.get_running_loop().time())
        chunk.stamp = release
        await emit(chunk)


class BandwidthStage(Stage):
    """Passes data at ``rate`` KB/s, in pieces of 100 ms worth when chunks are big."""

    def __init__(self, toxic: Toxic, active: bool, rng: random.Random):
        super().__init__(toxic, active, rng)
        self._debt = 0.0  # seconds of sending owed; negative after oversleeping

    async def process(self, chunk: Chunk, emit: Emit) -> None:
        loop = asyncio.get_running_loop()
        data = chunk.data
        while self.attrs["rate"] <= 0:  # a zero rate stalls the stream, as in Toxiproxy
            if await self.sleep(None) and self.removed:
                return await emit(chunk)
        rate = self.attrs["rate"] * 1000  # bytes per second
        piece = rate // 10
        self._debt += len(data) / rate
        while len(data) > piece:
            if await self.sleep(0.1):
                return await emit(Chunk(data, chunk.stamp))
            await emit(Chunk(data[:piece], chunk.stamp))
            data = data[piece:]
            self._debt -= 0.1
        started = loop.time()
        await self.sleep(self._debt)
        self._debt -= loop.time() - started
        await emit(Chunk(data, chunk.stamp))


class SlicerStage(Stage):
    """Cuts each chunk into slices of about ``average_size`` bytes, ``delay`` µs apart."""

    async def process(self, chunk: Chunk, emit: Emit) -> None:
        data = chunk.data
        delay = self.attrs["delay"] / 1_000_000
        bounds = slice_bounds(len(data), self.attrs["average_size"], self.attrs["size_variation"], self.rng)
        for start, end in bounds:
            await emit(Chunk(data[start:end], chunk.stamp))
            if delay and await self.sleep(delay):
                if end < len(data):
                    await emit(Chunk(data[end:], chunk.stamp))
                return


def slice_bounds(total: int, average: int, variation: int, rng: random.Random) -> list[tuple[int, int]]:
    """Toxiproxy's slicing: halve around the middle ± variation until slices are small."""
    if total - average <= variation:
        return [(0, total)]
    bounds: list[tuple[int, int]] = []
    todo = [(0, total)]
    while todo:
        start, end = todo.pop()
        if (end - start) - average <= variation:
            bounds.append((start, end))
            continue
        mid = start + (end - start) // 2 + (rng.randrange(-variation, variation) if variation else 0)
        todo.append((mid, end))
        todo.append((start, mid))
    return bounds


class SlowCloseStage(Stage):
    """Delays the close by ``delay`` ms once the source has ended."""

    async def finish(self) -> None:
        await self.sleep(self.attrs["delay"] / 1000)


class TimeoutStage(Stage):
    """Drops all data; closes the connection after ``timeout`` ms (never when 0).

    Removing the toxic closes the connection too: that is how Toxiproxy ends
    a connection it has been starving.
    """

    _timer: asyncio.TimerHandle | None = None

    def start(self, pipe: PipeControl) -> None:
        super().start(pipe)
        self._arm()

    def updated(self) -> None:
        super().updated()
        self._arm()

    def detach(self, position: int) -> None:
        super().detach(position)
        self._disarm()
        if self.active and self.pipe is not None:
            self.pipe.close()

    def pipe_closed(self) -> None:
        self._disarm()

    async def process(self, chunk: Chunk, emit: Emit) -> None:
        return  # dropped on the ground

    async def finish(self) -> None:
        self._disarm()
        if self.pipe is not None:
            self.pipe.close()

    def _arm(self) -> None:
        self._disarm()
        if self.active and self.attrs["timeout"] > 0 and self.pipe is not None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(self.attrs["timeout"] / 1000, self.pipe.close)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class ResetPeerStage(Stage):
    """On the first data (or the end of the source), waits ``timeout`` ms and resets."""

    async def process(self, chunk: Chunk, emit: Emit) -> None:
        if await self._wait_unless_removed():
            await emit(chunk)

    async def finish(self) -> None:
        await self._wait_unless_removed()

    async def _wait_unless_removed(self) -> bool:
        """Wait out the timeout, then reset; True if the toxic was removed first."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.attrs["timeout"] / 1000
        while not self.removed:
            if not await self.sleep(deadline - loop.time()):
                break
        if self.removed:
            return True
        assert self.pipe is not None
        self.pipe.reset()
        return False


class LimitDataStage(Stage):
    """Passes the first ``bytes`` bytes, then closes."""

    def __init__(self, toxic: Toxic, active: bool, rng: random.Random):
        super().__init__(toxic, active, rng)
        self.sent = 0  # kept across updates, as Toxiproxy's stateful toxics are

    async def process(self, chunk: Chunk, emit: Emit) -> None:
        room = max(self.attrs["bytes"] - self.sent, 0)
        if room:
            chunk.data = chunk.data[:room]
            self.sent += len(chunk.data)
            await emit(chunk)
        if self.sent >= self.attrs["bytes"] and self.pipe is not None:
            self.pipe.close()


STAGES: dict[str, type[Stage]] = {
    "latency": LatencyStage,
    "bandwidth": BandwidthStage,
    "slicer": SlicerStage,
    "slow_close": SlowCloseStage,
    "timeout": TimeoutStage,
    "reset_peer": ResetPeerStage,
    "limit_data": LimitDataStage,
}


def make_stage(toxic: Toxic, decide: random.Random, rng: random.Random) -> Stage:
    """Attach ``toxic`` to a connection, drawing once whether it applies there."""
    active = decide.random() < toxic.toxicity
    return STAGES[toxic.type](toxic, active, rng)


def redecide(stage: Stage, decide: random.Random) -> None:
    """Draw again after the toxicity changed (Toxiproxy re-rolls on update too)."""
    stage.active = decide.random() < stage.toxic.toxicity
