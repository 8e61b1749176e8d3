"""``jobquake report DIR``: re-check stored runs without running anything.

Loads each artifacts folder under DIR (see ``harness.report.artifacts``),
re-runs the checkers that were run (``verdict.json``'s ``checks`` and
``options``; the global invariants when there is no verdict), rewrites
``verdict.json`` and ``timeline.html``, and prints the verdicts. A stored
result of a checker this version does not know is kept as it was; a
checker whose evidence is absent from the folder answers ``unknown``. A
damaged folder (a history that is not UTF-8 or not JSON, a broken
verdict or snapshot) is skipped with its reason and the report goes on.
Exit code: 0 when nothing is invalid or damaged, 1 when something is, 2
when DIR holds no artifacts.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence, TextIO

from harness.checks.failure import format_failure
from harness.checks.registry import CHECKERS, GLOBAL_INVARIANTS
from harness.checks.result import Result, Verdict, mark
from harness.checks.runner import checker_name, run_checks
from harness.report.artifacts import TIMELINE, Artifacts, find_artifact_dirs, load_artifacts, write_verdict
from harness.report.html import render_html
from harness.report.terminal import summary_lines


def recheck(artifacts: Artifacts, names: Sequence[str] | None = None) -> Verdict:
    """Re-run the stored (or given) checkers over stored evidence."""
    stored = Verdict.from_dict(artifacts.stored) if artifacts.stored else None
    names = list(names or artifacts.stored.get("checks") or [checker_name(c) for c in GLOBAL_INVARIANTS])
    fresh = run_checks([CHECKERS[n] for n in names if n in CHECKERS], artifacts.history,
                       artifacts.snapshot, options=artifacts.stored.get("options") or {})
    by_name = {r.name: r for r in fresh.results}
    kept: list[Result] = []
    for name in names:
        if name in by_name:
            kept.append(by_name[name])
        elif stored is not None and name in stored.names():
            kept.append(stored[name])  # a checker we cannot run here: keep its stored result
    return Verdict(tuple(kept), fresh.options)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jobquake report", description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", help="an artifacts folder, or a folder of them")
    parser.add_argument("--checks", help="comma-separated checker names (default: those stored)")
    parser.add_argument("--no-html", action="store_true", help="do not rewrite timeline.html")
    parser.add_argument("--ascii", action="store_true", help="ASCII marks in the summary table")
    return parser


def _report_one(artifacts: Artifacts, names: list[str] | None, html: bool, out: TextIO) -> Verdict:
    verdict = recheck(artifacts, names)
    extra = {k: artifacts.stored.get(k) for k in ("seed", "nodeid", "title")}
    write_verdict(artifacts.root, verdict, **extra)
    if html:
        (artifacts.root / TIMELINE).write_text(
            render_html(artifacts.history, verdict, artifacts.snapshot, artifacts.title), encoding="utf-8")
    print(f"{artifacts.root}: {mark(verdict.valid)}", file=out)
    if verdict.valid is not True:
        text = format_failure(verdict, artifacts.root, artifacts.stored.get("seed"),
                              artifacts.stored.get("nodeid"))
        print("\n".join(("  " + line).rstrip() for line in text.splitlines()), file=out)
    return verdict


def report_main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Entry point of ``jobquake report``; returns the exit code."""
    out = out or sys.stdout
    args = _parser().parse_args(argv)
    names = [n.strip() for n in args.checks.split(",")] if args.checks else None
    unknown = [n for n in names or () if n not in CHECKERS]
    if unknown:
        print(f"unknown checker(s): {', '.join(unknown)}; known: {', '.join(CHECKERS)}", file=out)
        return 2
    dirs = find_artifact_dirs(args.dir)
    if not dirs:
        print(f"no artifacts (history.jsonl) under {args.dir}", file=out)
        return 2
    verdicts, damaged = {}, []
    for root in dirs:
        try:
            artifacts = load_artifacts(root)
        except DAMAGE as exc:
            damaged.append(root)
            print(f"{root}: skipped, damaged: {_damage(exc)}", file=out)
            continue
        verdicts[artifacts.stored.get("nodeid") or str(root)] = _report_one(artifacts, names, not args.no_html, out)
    for line in summary_lines(verdicts, ascii=args.ascii) if verdicts else ():
        print(line, file=out)
    if damaged:
        print(f"{len(damaged)} folder(s) skipped as damaged: {', '.join(str(d) for d in damaged)}", file=out)
    return 1 if damaged or any(v.valid is False for v in verdicts.values()) else 0


# what a folder damaged by a crash, a full disk or a hand edit raises when it is read
DAMAGE = (UnicodeDecodeError, json.JSONDecodeError, ValueError, KeyError, TypeError, OSError)


def _damage(exc: Exception) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return f"not UTF-8 ({exc.reason} at byte {exc.start})"
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON ({exc.msg}, line {exc.lineno} column {exc.colno})"
    return f"{type(exc).__name__}: {exc}"
