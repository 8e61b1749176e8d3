"""``jobquake nightly``: draw (or load) a schedule, run it, report it, shrink it when it fails.

Exit codes: 0 valid, 1 invalid, 2 unknown or a harness error.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from harness.errors import ConfigError

UNITS = {"": 1, "s": 1, "m": 60, "h": 3600}


def duration(text: str) -> float:
    """Seconds from ``90``, ``90s``, ``30m`` or ``1h``."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", str(text))
    if not match or float(match.group(1)) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a duration such as 90s, 30m or 1h")
    return float(match.group(1)) * UNITS[match.group(2)]


def rate(text: str) -> float:
    """Jobs per second from ``20/s``, ``20`` or ``600/m``."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(?:/\s*([smh]))?\s*", str(text))
    if not match or float(match.group(1)) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a rate such as 20/s or 600/m")
    return float(match.group(1)) / UNITS[match.group(2) or "s"]


def shard(text: str) -> tuple[int, int]:
    """``i/n`` with 0 <= i < n."""
    match = re.fullmatch(r"(\d+)/(\d+)", text.strip())
    if not match or not int(match.group(1)) < int(match.group(2)):
        raise argparse.ArgumentTypeError(f"{text!r}: expected i/n with 0 <= i < n, e.g. 0/4")
    return int(match.group(1)), int(match.group(2))


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``nightly`` on the ``jobquake`` command."""
    p = sub.add_parser("nightly", help="a stream of jobs under a seeded random fault schedule, "
                                       "checked continuously; shrunk to a scenario when it fails")
    p.add_argument("--duration", type=duration, default=60.0, help="how long to submit and inject (90s, 30m)")
    p.add_argument("--seed", type=int, default=None, help="seed of the workload and the schedule")
    p.add_argument("--faults", default=None, help="fault kinds, comma-separated (default: config or "
                                                   "kill,hang,pool,pause,defence_off,latency)")
    p.add_argument("--rate", type=rate, default=None, help="jobs per second (20/s)")
    p.add_argument("--concurrency", type=int, default=None, help="submissions in flight at once")
    p.add_argument("--fault-every", type=duration, default=None, help="mean time between faults (15s)")
    p.add_argument("--job-bound", type=float, default=None, help="seconds a job may take once no fault delays it")
    p.add_argument("--replay", type=Path, default=None, help="rerun the schedule stored in this folder")
    p.add_argument("--shrink-budget", type=duration, default=600.0, help="time for shrinking a failure (10m)")
    p.add_argument("--no-shrink", action="store_true", help="report a failure without shrinking it")
    p.add_argument("--out", type=Path, default=None, help="artifacts folder (default .jobquake/nightly/seed-N)")
    p.add_argument("--mutant", default=None, help="switch on this app mutant in the app's processes")
    p.add_argument("-n", dest="shards", type=int, default=1, help="run this many shards here, in parallel")
    p.add_argument("--shard", type=shard, default=None,
                   help="run only shard i of n, i counting from 0 (CI matrix, Indexed Job)")
    p.set_defaults(func=main)
    merge = sub.add_parser("merge", help="one report from the folders of several nightly shards")
    merge.add_argument("dirs", nargs="+", type=Path)
    merge.add_argument("--out", type=Path, default=None, help="where to write the merged report")
    merge.set_defaults(func=merge_main)


def _settings(args: argparse.Namespace):
    from harness import config as cfg

    overrides = {"seed": args.seed} if getattr(args, "seed", None) is not None else {}
    return cfg.resolve(cli=overrides, ini=cfg.read_ini(Path.cwd())[0], pyproject=cfg.find_pyproject(Path.cwd()))


def through_latest(path: Path) -> Path:
    from harness._artifacts_root import through_latest as newest

    return newest(path)


def _schedule(args: argparse.Namespace, config, nightly):
    from harness.nightly.schedule import MEAN_GAP_S, Schedule, draw, shard_seed

    if args.replay is not None:
        args.replay = through_latest(args.replay)  # a pytest session's nightly: in its session's folder
        path = args.replay / "schedule.json" if args.replay.is_dir() else args.replay
        if not path.is_file():
            raise ConfigError(f"--replay {args.replay}: no schedule.json there (give a nightly run's folder)",
                              key="replay")
        return Schedule.from_json(path.read_text())
    index, count = args.shard or (0, 1)
    kinds = tuple(k.strip() for k in args.faults.split(",") if k.strip()) if args.faults is not None \
        else nightly.kinds(config)
    return draw(seed=shard_seed(config.seed, index, count), duration=args.duration, kinds=kinds,
                target=nightly.target(config), rate=args.rate or nightly.rate,
                concurrency=args.concurrency or nightly.concurrency,
                job_bound=args.job_bound or nightly.bound(config), mean_gap=args.fault_every or MEAN_GAP_S,
                shard=f"{index}/{count}" if args.shard else None, sweep_every=nightly.sweep_every,
                replicas_of=nightly.replicas)


def _default_out(args: argparse.Namespace, config, schedule) -> Path:
    """A replay writes next to what it replays; a new run under .jobquake/nightly/seed-N[-shard-iofn]."""
    if args.replay is not None:
        return (args.replay if args.replay.is_dir() else args.replay.parent) / "replay"
    shard_part = f"-shard-{schedule.shard.replace('/', 'of')}" if schedule.shard else ""
    return config.root / ".jobquake" / "nightly" / f"seed-{schedule.seed}{shard_part}"


def main(args: argparse.Namespace) -> int:
    from harness.nightly.settings import NightlySettings

    config = _settings(args)
    nightly = NightlySettings.from_config(config)
    if args.mutant:
        if not config.mutant_env:
            raise ConfigError("--mutant: config key mutant_env is not set", key="mutant_env")
        os.environ[config.mutant_env] = args.mutant  # app processes inherit it
    if args.shards > 1:
        from harness.nightly.shards import run_local

        return run_local(args, config)
    schedule = _schedule(args, config, nightly)
    out = args.out or _default_out(args, config, schedule)
    from harness.nightly.session import nightly_session

    try:
        return nightly_session(config, nightly, schedule, Path(out),
                               shrink_budget=0 if args.no_shrink else args.shrink_budget)
    except KeyboardInterrupt:  # the stack was stopped on the way out; the evidence so far is in `out`
        print(f"\njobquake nightly: interrupted; schedule and evidence so far in {out}", file=sys.stderr)
        return 2


def merge_main(args: argparse.Namespace) -> int:
    from harness.nightly.shards import merge

    return merge([through_latest(folder) for folder in args.dirs], args.out)
