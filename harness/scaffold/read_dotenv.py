"""Reader: dotenv files of the project (``.env``, ``.env.example``... and those its settings load).

Each ``NAME=value`` line names a variable the app may read (docker compose
and the settings libraries load them) and gives the value it has while
developing: a default the scan keeps, over the code's, for a file the app
loads itself (``.env``, a settings class's ``env_file``); an example file's
values only fill defaults the code does not give.
"""
from __future__ import annotations

import re

from harness.scaffold.findings import Findings
from harness.scaffold.project import Project

LOADED = (".env",)  # files the app's settings (and docker compose) load by default
EXAMPLES = (".env.example", ".env.sample", ".env.dist", ".env.template", "env.example", "example.env",
            ".env.local.example")
LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")


def read(project: Project, found: Findings) -> None:
    loaded = [*LOADED, *(f for f in found.env_files if f not in LOADED)]
    for name in [*loaded, *EXAMPLES]:
        path = project.root / name
        if not path.is_file():
            continue
        for var, value in parse(path.read_text(encoding="utf-8", errors="replace")).items():
            known = var in found.env_vars
            if name in loaded and value != "":
                found.add_env(var, _typed(value), source=_with(found, var, name), override=True)
            elif not known or found.env_vars.get(var) is None:
                detail = found.env_details.get(var)
                # an example file documents a value; the app does not load it: still required
                found.add_env(var, _typed(value) if value != "" else None, source=_with(found, var, name),
                              override=known, required=bool(detail and detail.required))


def _with(found: Findings, var: str, file: str) -> str:
    known = found.env_details.get(var)
    return f"{known.source}, {file}" if known is not None and known.source else file


def parse(text: str) -> dict[str, str]:
    """``NAME=value`` pairs of a dotenv file (quotes removed, comments and blank lines skipped)."""
    pairs = {}
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        match = LINE.match(line)
        if not match:
            continue
        value = match.group(2)
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        pairs[match.group(1)] = value
    return pairs


def _typed(value: str) -> object:
    """A number where the text is one (a duration's default), else the text."""
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        return value
