"""The ``jobquake`` command: config, report, demo."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness import config as cfg
from harness.errors import HarnessError


def _config(args: argparse.Namespace) -> int:
    pyproject = cfg.find_pyproject(Path.cwd())
    ini, ini_path = cfg.read_ini(Path.cwd())
    settings = cfg.resolve(ini=ini, pyproject=pyproject)
    rows = settings.describe()
    width = max(len(key) for key, _value, _source in rows)
    print(f"pyproject: {pyproject or '(none)'}   ini: {ini_path or '(none)'}")
    for key, value, source in rows:
        shown = value if not isinstance(value, tuple) else ", ".join(value)
        print(f"{key:<{width}}  {shown!s:<40}  [{source}]")
    return 0


def _report(args: argparse.Namespace) -> int:
    from harness.report.rerun import report_main

    return report_main([str(args.dir)])


def _demo(args: argparse.Namespace) -> int:
    from harness.demo import run_demo

    return run_demo(seed=args.seed)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jobquake", description="Chaos harness for background jobs.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("config", help="print every effective setting and where it came from").set_defaults(func=_config)
    report = sub.add_parser("report", help="re-check and re-render stored histories without re-running")
    report.add_argument("dir", type=Path, help="an artifacts folder (or a folder of them)")
    report.set_defaults(func=_report)
    demo = sub.add_parser("demo", help="start the stack, push one job through it and show what happened")
    demo.add_argument("--seed", type=int, default=None)
    demo.set_defaults(func=_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except HarnessError as exc:
        print(f"jobquake: {exc}", file=sys.stderr)
        for note in getattr(exc, "__notes__", []):
            print(note, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
