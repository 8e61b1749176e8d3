"""docs/reference/cli.md: the ``jobquake`` command, the pytest options and the markers.

From the command's own argparse parser (``harness.cli.build_parser``) and the
plugin's ``pytest_addoption`` / ``pytest_configure``, read through small
recorders: an option added there appears here.
"""
from __future__ import annotations

import argparse
from typing import Any

from docgen import text

INTRO = """
Two entry points: the `jobquake` command, and the pytest plugin (installed with the package; a
scenario run is a plain `pytest` run). `jobquake <command> --help` prints the same text.
"""


def subcommands() -> dict[str, argparse.ArgumentParser]:
    """``jobquake``'s subcommands, name -> parser."""
    from harness.cli import build_parser

    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _helps() -> dict[str, str]:
    from harness.cli import build_parser

    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {choice.dest: choice.help or "" for choice in action._choices_actions}


def _arguments(parser: argparse.ArgumentParser) -> list[tuple[str, ...]]:
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        name = ", ".join(action.option_strings) if action.option_strings else action.dest
        if action.option_strings and action.nargs != 0:
            name += f" {action.metavar or action.dest.upper()}"
        default = "" if action.default in (None, False, argparse.SUPPRESS) else f"`{action.default!r}`"
        rows.append((f"`{name}`", action.help or "", default))
    return rows


def _command(name: str, parser: argparse.ArgumentParser, help_: str) -> list[str]:
    usage = " ".join(parser.format_usage().split())
    lines = [f"## `jobquake {name}`", "", help_, "", f"`{usage.removeprefix('usage: ')}`", ""]
    rows = _arguments(parser)
    return lines + (text.table(("argument", "what", "default"), rows) if rows else ["No arguments."]) + [""]


class _Recorder:
    """Stands in for pytest's parser and option group: keeps what the plugin adds."""

    def __init__(self) -> None:
        self.options: list[tuple[str, dict[str, Any]]] = []
        self.inis: list[str] = []
        self.markers: list[str] = []

    def getgroup(self, *_args: Any) -> "_Recorder":
        return self

    def addoption(self, *flags: str, **kwargs: Any) -> None:
        self.options.append((", ".join(flags), kwargs))

    def addini(self, name: str, *_args: Any, **_kwargs: Any) -> None:
        self.inis.append(name)

    def addinivalue_line(self, name: str, line: str) -> None:
        if name == "markers":
            self.markers.append(line)


def plugin_options() -> _Recorder:
    """What the pytest plugin declares: options, ini keys, markers."""
    from harness import pytest_plugin

    recorder = _Recorder()
    pytest_plugin.pytest_addoption(recorder)  # type: ignore[arg-type]
    return recorder


def _pytest_section() -> list[str]:
    recorder = plugin_options()
    rows = [(f"`{flags}" + (f" {kw['metavar']}`" if kw.get("metavar") else "`"), kw.get("help", ""))
            for flags, kw in recorder.options]
    return ["## pytest options", "",
            "Every configuration key that is not a table is also an option `--jobquake-<key>` and an ini "
            "key `jobquake_<key>` ([configuration reference](config.md)).", "",
            *text.table(("option", "what"), rows), ""]


def markers() -> list[str]:
    """The marker lines the plugin declares, as ``pytest --markers`` prints them (its string constants)."""
    from harness import pytest_plugin

    return [const for const in pytest_plugin.pytest_configure.__code__.co_consts
            if isinstance(const, str) and const.split("(")[0] in ("jobquake", "catches") and "):" in const]


def _markers() -> list[str]:
    lines = []
    for line in markers():
        head, _, what = line.partition("): ")
        lines.append(f"- `@pytest.mark.{head})`: {what}")
    return ["## Markers", "", *lines, "",
            "`settle=False`: the scenario settles itself (`jq.settle(timeout)`); a number: the harness "
            "settles with that timeout. A marker with an unknown keyword, checker or mutant, or on a test without the `jq` fixture, is a "
            "collection error listing what is known.", ""]


def render() -> str:
    helps = _helps()
    body: list[str] = []
    for name, parser in subcommands().items():
        body += _command(name, parser, helps.get(name, ""))
    body += _pytest_section() + _markers()
    return text.page("Command-line reference", INTRO, body)
