"""The data pump of one direction of a proxied connection, through its toxic stages.

Like Toxiproxy, a direction that ends (its source closed, or a toxic ended
it) closes its destination socket completely; the other direction then sees
its source end, flushes what its own toxics still hold, and closes in turn.
"""
from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from harness.proxy.stage import Chunk, Stage


log = logging.getLogger("harness.proxy")

CHUNK_SIZE = 65536
# Toxiproxy's channel buffer: bounded, so a toxic that holds data pushes back on the sender.
QUEUE_CHUNKS = 1024


class PipeOwner(Protocol):
    """What a pipe uses of the link it belongs to (``harness.proxy.link.Link``): its traffic count and reset."""

    traffic: dict[str, int]

    def reset(self) -> None: ...


class Pipe:
    """One direction: read the source, pass chunks through the stages, write the destination.

    With no toxic the pipe is a tight read -> write -> drain loop. Once a toxic
    is attached, chunks go through a bounded queue to a processor task, so
    that the reader keeps stamping arrival times while a toxic holds data
    (latency is counted from arrival, as in Toxiproxy). The pipe goes back to
    direct writes only when no toxic is left and nothing is in flight, which
    keeps the bytes in order.
    """

    def __init__(self, link: PipeOwner, direction: str, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter, stages: list[Stage]):
        self.direction = direction
        self.stages = stages  # shared with the link, which adds and removes stages
        self.ended = asyncio.Event()
        self._link = link
        self._reader = reader
        self._writer = writer
        self._queue: asyncio.Queue[Chunk | None] | None = None
        self._pending = 0  # chunks (and the end marker) queued or being processed
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        self._tasks.append(asyncio.get_running_loop().create_task(self._read()))
        for stage in self.stages:
            self.attached(stage)

    def attached(self, stage: Stage) -> None:
        """A stage joined the chain (at start or when its toxic was added)."""
        if not self.ended.is_set():
            stage.start(self)
            self._processor_queue()

    def close(self, *, abort: bool = False) -> None:
        """End this direction: stop reading and close the destination."""
        if self.ended.is_set():
            return
        self.ended.set()
        for stage in self.stages:
            stage.pipe_closed()
        current = asyncio.current_task()
        for task in self._tasks:
            if task is not current:
                task.cancel()
        if abort:
            self._writer.transport.abort()
        else:
            self._writer.close()  # sends what is buffered, then FIN

    def reset(self) -> None:
        self._link.reset()

    async def _read(self) -> None:
        loop = asyncio.get_running_loop()
        reader, writer = self._reader, self._writer
        try:
            while True:
                data = await reader.read(CHUNK_SIZE)
                if not data:
                    break
                self._link.traffic[self.direction] += len(data)
                if self.stages or self._pending:
                    self._pending += 1
                    await self._processor_queue().put(Chunk(data, loop.time()))
                else:
                    writer.write(data)
                    await writer.drain()
        except OSError:
            pass  # a reset source ends this direction like a closed one
        if self.stages or self._pending:
            self._pending += 1
            await self._processor_queue().put(None)
        else:
            self.close()

    def _processor_queue(self) -> asyncio.Queue[Chunk | None]:
        if self._queue is None:
            self._queue = asyncio.Queue(QUEUE_CHUNKS)
            self._tasks.append(asyncio.get_running_loop().create_task(self._process(self._queue)))
        return self._queue

    async def _process(self, queue: asyncio.Queue[Chunk | None]) -> None:
        try:
            while not self.ended.is_set():
                chunk = await queue.get()
                if chunk is None:
                    await self._finish_chain()
                    self.close()
                    return
                await self._emit_from(0, chunk)
                self._pending -= 1
        except Exception:  # a broken toxic must not leave the connection hanging
            log.exception("toxic chain failed on the %s direction; closing it", self.direction)
            self.close()

    async def _emit_from(self, index: int, chunk: Chunk) -> None:
        stages = self.stages
        while index < len(stages) and not stages[index].active:
            index += 1
        if index >= len(stages):
            await self._write(chunk)
            return
        stage = stages[index]
        stage.toxic.bytes_seen += len(chunk.data)  # it acts on these bytes: the toxic landed

        async def emit(next_chunk: Chunk) -> None:
            await self._emit_from(self._index_after(stage), next_chunk)

        await stage.process(chunk, emit)

    async def _finish_chain(self) -> None:
        index = 0
        while index < len(self.stages) and not self.ended.is_set():
            stage = self.stages[index]
            if stage.active:
                await stage.finish()
            index = self._index_after(stage)

    def _index_after(self, stage: Stage) -> int:
        # The chain may have changed while the stage held the chunk.
        if stage.removed:
            return stage.position
        return self.stages.index(stage) + 1

    async def _write(self, chunk: Chunk) -> None:
        if self.ended.is_set():
            return
        try:
            self._writer.write(chunk.data)
            await self._writer.drain()
        except OSError:
            self.close()
