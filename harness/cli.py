"""The ``jobquake`` command: config, run/demo, mutants, report, init."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness import config as cfg
from harness.errors import HarnessError


def _config(args: argparse.Namespace) -> int:
    pyproject = cfg.find_pyproject(Path.cwd())
    ini_path = cfg.read_ini(Path.cwd())[1]
    settings = _settings()
    rows = settings.describe()
    width = max(len(key) for key, _value, _source in rows)
    print(f"pyproject: {pyproject or '(none)'}   ini: {ini_path or '(none)'}")
    for key, value, source in rows:
        shown = value if not isinstance(value, tuple) else ", ".join(map(_shown, value))
        print(f"{key:<{width}}  {shown!s:<40}  [{source}]")
    return 0


def _shown(item: object) -> str:
    return f"{item:g}" if isinstance(item, float) else str(item)


def _report(args: argparse.Namespace) -> int:
    from harness.report.rerun import report_main

    return report_main([str(args.dir)])


def _settings():
    return cfg.resolve(ini=cfg.read_ini(Path.cwd())[0], pyproject=cfg.find_pyproject(Path.cwd()))


def _run(args: argparse.Namespace) -> int:
    """Run the scenario suite with the plugin (pytest does the work; this only picks the folder)."""
    import pytest

    settings = _settings()
    extra = [f"--jobquake-seed={args.seed}"] if args.seed is not None else []
    code = pytest.main([str(settings.root / settings.scenarios), "-p", "no:cacheprovider", *extra, *args.pytest_args])
    artifacts = settings.root / settings.artifacts
    print(f"\nevidence and HTML timelines: {artifacts}/latest/<scenario>/timeline.html")
    return int(code)


def _mutants(args: argparse.Namespace) -> int:
    import json

    from harness.mutation import MutationMatrix, render, to_json
    from harness.mutation_plan import run_shared

    settings = _settings()
    matrix = MutationMatrix(settings, root=settings.root, jobs=args.jobs, extra_args=args.pytest_args)
    if args.only:
        matrix.mutants = {k: v for k, v in matrix.mutants.items() if k in args.only}
    if args.full or args.first_catch:
        return _mutants_full(args, settings, matrix)
    if matrix.declares_nothing():
        if args.declared:
            print("no scenario declares a catch (@pytest.mark.catches): nothing to check; "
                  "`jobquake mutants --full` runs every scenario against every mutant")
            return 0
        print("no scenario declares a catch (@pytest.mark.catches): every scenario runs against every mutant "
              "(as `jobquake mutants --full`)")
        return _mutants_full(args, settings, matrix)
    baseline, results = matrix.run(None if args.session_per_mutant else run_shared)
    undeclared = [r.name for r in results if not r.expected]
    if args.declared:  # a regression gate: every catch a scenario claims still holds
        results = [r for r in results if r.expected]
    for line in render(baseline, results, matrix.narrowed()):
        print(line)
    if args.declared and undeclared:
        print(f"left out, no scenario declares a catch ({len(undeclared)}): {', '.join(undeclared)}")
    out = args.out or settings.root / settings.artifacts / "mutants.json"  # the project's run output, not its sources
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(to_json(baseline, results), indent=1, default=str))
    print(f"results: {out}")
    survived = [r.name for r in results if not r.caught]
    return 0 if baseline.exit_code == 0 and not survived else 1


def _mutants_full(args: argparse.Namespace, settings, matrix) -> int:
    """``mutants --full``: every scenario against every mutant; exit 0 when all are caught by invariants."""
    import json
    import time

    from harness.mutation_full import full_to_json, render_full, run_full

    started = time.monotonic()
    baseline, results = run_full(matrix, shared=not args.session_per_mutant, first_catch=args.first_catch)
    wall = time.monotonic() - started
    for line in render_full(baseline, results, wall):
        print(line)
    out = args.out or settings.root / settings.artifacts / "mutants-full.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(full_to_json(baseline, results, wall), indent=1, default=str))
    print(f"matrix: {out}")
    return 0 if baseline.exit_code == 0 and all(r.caught_by_invariant for r in results) else 1


def _init(args: argparse.Namespace) -> int:
    from harness.scaffold.command import run_init

    return run_init(args.path, dry_run=args.dry_run)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jobquake", description="Chaos harness for background jobs.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("config", help="print every effective setting and where it came from").set_defaults(func=_config)
    report = sub.add_parser("report", help="re-check and re-render stored histories without re-running")
    report.add_argument("dir", type=Path, help="an artifacts folder (or a folder of them)")
    report.set_defaults(func=_report)
    for name, text in (("run", "run the scenario suite against the app"),
                       ("demo", "run the shipped scenarios and show the verdicts (same as run)")):
        run = sub.add_parser(name, help=text)
        run.add_argument("--seed", type=int, default=None,
                         help="seed for every random choice in the session (config seed), printed so a run can be replayed")
        run.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
        run.set_defaults(func=_run)
    mutants = sub.add_parser("mutants", help="run the mutation matrix: every mutant must be caught")
    mutants.add_argument("--jobs", type=int, default=2, help="pytest processes at once")
    mutants.add_argument("--only", nargs="*", help="just these mutants")
    mutants.add_argument("--declared", action="store_true",
                         help="only the mutants some scenario declares it catches (the rest listed, not run)")
    mutants.add_argument("--full", action="store_true",
                         help="every scenario against every mutant; show which invariants catch each")
    mutants.add_argument("--first-catch", action="store_true",
                         help="with --full (implied): stop each mutant at its first catch by an invariant, the "
                              "scenarios written for it first (is every mutant caught, not which invariants catch it)")
    mutants.add_argument("--session-per-mutant", action="store_true",
                         help="every mutant in a pytest session of its own (default: mutants that may "
                              "share sessions)")
    mutants.add_argument("--out", type=Path, default=None,
                         help="where the results go (default <artifacts>/mutants.json)")
    mutants.add_argument("pytest_args", nargs="*",
                         help="more arguments for every pytest run (after --), e.g. -- --jobquake-sqs localstack")
    mutants.set_defaults(func=_mutants)
    init = sub.add_parser("init", help="describe this project to jobquake: [tool.jobquake] and scenarios/")
    init.add_argument("path", nargs="?", type=Path, default=Path("."), help="the project folder (default: here)")
    init.add_argument("--dry-run", action="store_true", help="print what it would write, write nothing")
    init.set_defaults(func=_init)
    from harness.nightly.command import add_parser as add_nightly

    add_nightly(sub)  # `jobquake nightly` and `jobquake merge`
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from harness._signals import StopOnSignal

    signals = StopOnSignal().install()  # SIGTERM / SIGHUP end a run as cleanly as Ctrl-C
    try:
        return args.func(args)
    except KeyboardInterrupt as exc:
        print(f"jobquake: {exc or 'interrupted'}", file=sys.stderr)
        return 130
    except HarnessError as exc:
        print(f"jobquake: {exc}", file=sys.stderr)
        for note in getattr(exc, "__notes__", []):
            print(note, file=sys.stderr)
        return 2
    finally:
        signals.uninstall()


if __name__ == "__main__":
    sys.exit(main())
