"""Markdown pieces the reference pages share: signatures, docstrings, table cells.

Everything is read with the standard library's ``inspect``; the output must be
the same from run to run (no memory addresses), since a test compares it with
the committed pages.
"""
from __future__ import annotations

import inspect
import re
from typing import Any

GENERATED = "Generated from the code by `scripts/reference_docs.py` (`make reference-docs`); do not edit by hand."


def clean(text: str) -> str:
    """No memory addresses in the output: it must not change from run to run."""
    return re.sub(r" at 0x[0-9a-f]+", "", text)


def _annotation(value: Any) -> str:
    if value is inspect.Parameter.empty:
        return ""
    return value if isinstance(value, str) else inspect.formatannotation(value)


def signature(obj: Any, *, skip: int = 0) -> str:
    """``(a: int, *, b: str = 'x') -> bool``, annotations as written in the source.

    ``skip`` leaves out that many leading parameters (a checker's ``history, snapshot``).
    """
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return ""
    parts, kw_only_marked = [], False
    for param in list(sig.parameters.values())[skip:]:
        if param.kind is param.KEYWORD_ONLY and not kw_only_marked:
            parts.append("*")
            kw_only_marked = True
        prefix = {param.VAR_POSITIONAL: "*", param.VAR_KEYWORD: "**"}.get(param.kind, "")
        if param.kind is param.VAR_POSITIONAL:
            kw_only_marked = True
        text = prefix + param.name
        if _annotation(param.annotation):
            text += f": {_annotation(param.annotation)}"
        if param.default is not param.empty:
            text += f" = {param.default!r}" if _annotation(param.annotation) else f"={param.default!r}"
        parts.append(text)
    returns = _annotation(sig.return_annotation)
    return clean(f"({', '.join(parts)})" + (f" -> {returns}" if returns else ""))


def doc(obj: Any) -> str:
    """The docstring, dedented; ``(no docstring)`` makes a missing one visible in review."""
    return clean(inspect.getdoc(obj) or "(no docstring)")


def summary(obj: Any) -> str:
    """The docstring's first line."""
    return doc(obj).split("\n", 1)[0].strip()


def cell(text: str) -> str:
    """``text`` fit for one Markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    """A Markdown table, as lines."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]


def page(title: str, intro: str, body: list[str]) -> str:
    """A whole page: title, the generated-from note, an introduction, the body; one final newline."""
    lines = [f"# {title}", "", f"*{GENERATED}*", "", intro.strip(), "", *body]
    return "\n".join(lines).rstrip() + "\n"
