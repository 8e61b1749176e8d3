"""``python -m harness.proxy``: the embedded fault proxy as a process, as the harness runs it.

Logs one line per API call and per connection opened or closed to stderr,
and exits with status 0 on SIGTERM or SIGINT. Only asyncio and aiohttp are
imported, so the process answers within a fraction of a second.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import socket
import sys

from harness._control_token import read_token
from harness.proxy.fields import ApiError
from harness.proxy.runner import shutdown, start_api
from harness.proxy.server import ProxyCollection

log = logging.getLogger("harness.proxy")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m harness.proxy", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1", help="API address (loopback only)")
    parser.add_argument("--port", type=int, default=8474, help="API port (Toxiproxy's is 8474)")
    parser.add_argument("--fd", type=int, default=None,
                        help="serve the API on this listening socket, bound by the caller (--host/--port unused)")
    parser.add_argument("--token-file", default=None,
                        help="file holding the token every API request but /version must carry (none: open)")
    parser.add_argument("--seed", type=int, default=0, help="seed of every random draw (toxicity, jitter, slicing)")
    parser.add_argument("--config", help="JSON file: a list of proxies to populate at start")
    return parser.parse_args(argv)


async def serve(args: argparse.Namespace) -> int:
    proxies = ProxyCollection(args.seed)
    if args.config:
        with open(args.config, encoding="utf-8") as file:
            applied, error = await proxies.populate(json.load(file))
        if error is not None:
            raise error
        log.info("populated %d proxies from %s", len(applied), args.config)
    sock = socket.socket(fileno=args.fd) if args.fd is not None else None
    if sock is not None:
        args.host, args.port = sock.getsockname()[:2]
    runner, port = await start_api(proxies, args.host, args.port, sock=sock, token=read_token(args.token_file))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    log.info("API listening on http://%s:%d (seed %d)", args.host, port, args.seed)
    await stop.wait()
    log.info("stopping")
    await shutdown(runner, proxies)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.INFO,
        format="%(asctime)s jobquake-proxy %(levelname)s %(message)s",
    )
    try:
        return asyncio.run(serve(args))
    except (ApiError, OSError, ValueError) as exc:  # bad config, address in use...
        message = exc.message if isinstance(exc, ApiError) else str(exc)
        log.error("cannot start: %s", message)
        return 2


if __name__ == "__main__":
    sys.exit(main())
