"""``python -m harness.paidapi``: run the fake paid model provider.

Logs one line per call start and end to stderr. SIGTERM (or SIGINT)
answers every open call 503 and exits 0.
"""
from __future__ import annotations

import argparse
import json
import logging
import socket
import sys

from aiohttp import web

from harness._control_token import read_token
from harness.errors import ConfigError
from harness.paidapi.pricing import PriceTable
from harness.paidapi.profile import LatencyProfile
from harness.paidapi.provider import Provider
from harness.paidapi.server import make_app
from harness.paidapi.threaded import HOST, SHUTDOWN_TIMEOUT


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(prog="python -m harness.paidapi", description=__doc__)
    parser.add_argument("--host", default=HOST)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--fd", type=int, default=None,
                        help="serve on this listening socket, bound to --host:--port by the caller")
    parser.add_argument("--token-file", default=None,
                        help="file holding the token the control routes require (none: they answer anyone)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the latency draws")
    parser.add_argument("--time-scale", type=float, default=1.0,
                        help="multiply every latency by this (e.g. 0.01 in tests)")
    parser.add_argument("--profile", default="default",
                        help="latency profile: 'default' or 'fixed:<seconds>'")
    parser.add_argument("--call-key", default="",
                        help="pattern attributing a call by its key, e.g. 'sum:{job_id}:{step}'")
    parser.add_argument("--call-key-header", default="Idempotency-Key",
                        help="request header holding the key --call-key reads")
    parser.add_argument("--prices", default="{}",
                        help='price table as JSON: {"<model>": {"input": $/M, "output": $/M}}')
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Serve until SIGTERM / SIGINT."""
    args = parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s paidapi %(message)s")
    try:
        token = read_token(args.token_file)
    except (OSError, ValueError) as exc:
        print(f"paidapi: cannot read the control token: {exc}", file=sys.stderr)
        return 2
    try:
        provider = Provider(time_scale=args.time_scale, seed=args.seed,
                            profile=LatencyProfile.named(args.profile),
                            prices=PriceTable.from_config(_json(args.prices, "--prices")),
                            call_key=args.call_key, call_key_header=args.call_key_header)
    except ConfigError as exc:
        print(f"paidapi: {exc}", file=sys.stderr)
        return 2
    url = f"http://{args.host}:{args.port}"
    where = {"sock": socket.socket(fileno=args.fd)} if args.fd is not None else {"host": args.host, "port": args.port}
    web.run_app(
        make_app(provider, token), **where, handler_cancellation=True,
        shutdown_timeout=SHUTDOWN_TIMEOUT, access_log=None,
        print=lambda _banner: logging.getLogger("harness.paidapi").info("listening on %s", url),
    )
    return 0


def _json(text: str, flag: str) -> dict:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{flag} is not JSON: {exc}", key=flag) from exc
    if not isinstance(value, dict):
        raise ConfigError(f"{flag} must be a JSON object, got {text!r}", key=flag)
    return value


if __name__ == "__main__":
    sys.exit(main())
