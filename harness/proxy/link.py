"""One proxied TCP connection: the client's socket, the upstream's, and a pipe each way."""
from __future__ import annotations

import asyncio
import random
import socket
import struct

from harness.proxy.fields import split_address, unix_path
from harness.proxy.pipe import Pipe
from harness.proxy.stage import Stage
from harness.proxy.stages import make_stage, redecide
from harness.proxy.toxics import DOWNSTREAM, UPSTREAM, Toxic

_LINGER_RESET = struct.pack("ii", 1, 0)  # close() then sends RST instead of FIN


class Link:
    """A proxied connection: the client's socket, the upstream's, and a pipe each way.

    All randomness (toxicity draws, jitter, slice sizes) comes from ``seed``,
    which the proxy draws from its own seeded generator as connections arrive.
    """

    def __init__(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter,
                 toxics: list[Toxic], seed: int, traffic: dict[str, int] | None = None):
        rng = random.Random(seed)
        self.traffic = traffic if traffic is not None else {UPSTREAM: 0, DOWNSTREAM: 0}  # the proxy's count
        self._decide = random.Random(rng.getrandbits(64))
        self._rng = random.Random(rng.getrandbits(64))
        self._client = (client_reader, client_writer)
        self._upstream_writer: asyncio.StreamWriter | None = None
        self._aborted = False
        self.chains: dict[str, list[Stage]] = {UPSTREAM: [], DOWNSTREAM: []}
        self.pipes: dict[str, Pipe] = {}
        for toxic in toxics:
            self.chains[toxic.stream].append(make_stage(toxic, self._decide, self._rng))

    async def run(self, upstream: str) -> None:
        """Connect to the upstream (``host:port``, or ``unix:/path``) and pump both ways until both
        directions end."""
        client_reader, client_writer = self._client
        try:
            upstream_reader, upstream_writer = await _open(upstream)
        except OSError:
            client_writer.close()
            raise
        self._upstream_writer = upstream_writer
        if self._aborted:  # the proxy went down while we were connecting
            upstream_writer.transport.abort()
            return
        for writer in (client_writer, upstream_writer):
            _set_nodelay(writer)
        self.pipes = {
            UPSTREAM: Pipe(self, UPSTREAM, client_reader, upstream_writer, self.chains[UPSTREAM]),
            DOWNSTREAM: Pipe(self, DOWNSTREAM, upstream_reader, client_writer, self.chains[DOWNSTREAM]),
        }
        for pipe in self.pipes.values():
            pipe.start()
        for pipe in self.pipes.values():
            await pipe.ended.wait()

    def add_toxic(self, toxic: Toxic) -> None:
        stage = make_stage(toxic, self._decide, self._rng)
        self.chains[toxic.stream].append(stage)
        if toxic.stream in self.pipes:
            self.pipes[toxic.stream].attached(stage)

    def update_toxic(self, toxic: Toxic, toxicity_changed: bool) -> None:
        stage = self._stage_of(toxic)
        if toxicity_changed:
            redecide(stage, self._decide)
        stage.updated()

    def remove_toxic(self, toxic: Toxic) -> None:
        chain = self.chains[toxic.stream]
        stage = self._stage_of(toxic)
        position = chain.index(stage)
        del chain[position]
        stage.detach(position)

    def reset(self) -> None:
        """Close both sockets with RST (what the reset_peer toxic simulates)."""
        for writer in self._writers():
            sock = writer.get_extra_info("socket")
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_RESET)
            except (AttributeError, OSError):
                pass  # that side is already closed
        self.abort()

    def abort(self) -> None:
        """Drop the connection now (the proxy was disabled, changed or deleted)."""
        self._aborted = True
        for writer in self._writers():
            writer.transport.abort()
        for pipe in self.pipes.values():
            pipe.close(abort=True)

    def _writers(self) -> list[asyncio.StreamWriter]:
        writers = [self._client[1]]
        if self._upstream_writer is not None:
            writers.append(self._upstream_writer)
        return writers

    def _stage_of(self, toxic: Toxic) -> Stage:
        return next(stage for stage in self.chains[toxic.stream] if stage.toxic is toxic)


async def _open(upstream: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    path = unix_path(upstream)
    if path is not None:
        return await asyncio.open_unix_connection(path)
    return await asyncio.open_connection(*split_address(upstream, "upstream"))


def _set_nodelay(writer: asyncio.StreamWriter) -> None:
    # asyncio already sets TCP_NODELAY on TCP transports; stated here because
    # a proxy that batches small writes (Nagle) would add 40 ms to every reply.
    sock = writer.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
