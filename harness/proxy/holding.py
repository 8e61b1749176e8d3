"""Listening sockets that keep their port while they do not listen.

A disabled proxy refuses connections, as Toxiproxy's does, but unlike
Toxiproxy's it does not give its port back: another local user could bind
it in that moment and read what the app sends on reconnecting (a Redis
``AUTH`` with its password, say). On Linux, ``connect(AF_UNSPEC)`` on a
listening TCP socket stops it listening (queued connections are reset, new
ones refused) and leaves it bound when its port was bound explicitly; nobody
else can bind the port while it stays so, with or without ``SO_REUSEADDR``
or ``SO_REUSEPORT`` (once the socket itself drops ``SO_REUSEADDR``), and
``listen()`` on it listens again. A socket asked for
port 0 is first given a port of the system's choosing and then bound to it
by number, since only a port bound by number stays bound.
"""
from __future__ import annotations

import ctypes
import ipaddress
import os
import socket

BACKLOG = 128
_libc = ctypes.CDLL(None, use_errno=True)


class _Unspecified(ctypes.Structure):
    _fields_ = [("family", ctypes.c_ushort), ("data", ctypes.c_char * 26)]


def bind_held(host: str, port: int) -> socket.socket:
    """A TCP socket bound to host:port (a port of the system's choosing for 0), not yet listening."""
    family = socket.AF_INET6 if ipaddress.ip_address(host).version == 6 else socket.AF_INET
    if port == 0:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.bind((host, 0))
            port = probe.getsockname()[1]
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart while old links linger
        sock.bind((host, port))
    except BaseException:
        sock.close()
        raise
    return sock


def listening(sock: socket.socket) -> bool:
    return bool(sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN))


def unlisten(sock: socket.socket) -> None:
    """Stop listening and keep the port (see the module's docstring); OSError if the kernel will not."""
    if not listening(sock):
        return
    if _libc.connect(sock.fileno(), ctypes.byref(_Unspecified(socket.AF_UNSPEC)), ctypes.sizeof(_Unspecified)):
        errno = ctypes.get_errno()
        raise OSError(errno, f"cannot stop listening: {os.strerror(errno)}")
    if listening(sock):
        raise OSError(0, "cannot stop listening: the socket still listens")
    # a bound socket that does not listen lets anyone bind beside it with SO_REUSEADDR while
    # it has that option itself: it must not, until it listens again
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 0)


def relisten(sock: socket.socket) -> None:
    """Listen (again): ``SO_REUSEADDR`` back first, or the connections it accepted before, now
    closing (TIME_WAIT), would keep it from listening on its own port."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.listen(BACKLOG)
