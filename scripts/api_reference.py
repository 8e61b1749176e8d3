"""Write docs/api.md: the public names of jobquake, with their signatures and docstrings.

Run ``make api-docs`` (or ``python scripts/api_reference.py``) after changing a
public name or its docstring; ``--check`` exits 1 when docs/api.md is out of
date (``tests/quality/test_api_reference.py`` does the same check).

What is public is what the modules say: each section lists a module's
``__all__``; ``Config``'s settings come from ``harness.config.OPTIONS``. The
standard library's ``inspect`` reads everything: the output is plain
Markdown, stable from run to run, and reviewable in a diff.
"""
from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import re
import sys
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "api.md"

# (module, what it is for); each lists its __all__
SECTIONS = (
    ("harness", "the package: what a scenario imports"),
    ("harness.run", "the handle a scenario gets as `jq`"),
    ("harness.config", "settings, where they come from"),
    ("harness.faults", "faults a scenario injects through `jq.faults`"),
    ("harness.checks", "invariant checkers and their results"),
    ("harness.evidence", "what the harness reads back from the app's database"),
    ("harness.errors", "every error jobquake raises"),
)
SKIP = {"__version__", "annotations"}


def _clean(text: str) -> str:
    """No memory addresses in the output: it must not change from run to run."""
    return re.sub(r" at 0x[0-9a-f]+", "", text)


def _annotation(value: Any) -> str:
    if value is inspect.Parameter.empty:
        return ""
    return value if isinstance(value, str) else inspect.formatannotation(value)


def signature(obj: Any) -> str:
    """``(a: int, *, b: str = 'x') -> bool``, annotations as written in the source."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return ""
    parts, kw_only_marked = [], False
    for param in sig.parameters.values():
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
    return _clean(f"({', '.join(parts)})" + (f" -> {returns}" if returns else ""))


def _doc(obj: Any) -> str:
    return _clean(inspect.getdoc(obj) or "(no docstring)")


def _own_members(cls: type) -> Iterator[tuple[str, Any]]:
    """Public methods and properties defined by ``cls`` itself, in source order."""
    for name, member in vars(cls).items():
        if name.startswith("_") or not (inspect.isfunction(member) or isinstance(member, (property, classmethod,
                                                                                          staticmethod))):
            continue
        yield name, member


def _class(name: str, cls: type) -> list[str]:
    bases = [b.__name__ for b in cls.__bases__ if b is not object]
    many_fields = dataclasses.is_dataclass(cls) and len(dataclasses.fields(cls)) > 8
    head = f"### class `{name}{'(...)' if many_fields else signature(cls)}`" + (f" ({', '.join(bases)})" if bases else "")
    lines = [head, "", _doc(cls), ""]
    for member_name, member in _own_members(cls):
        if isinstance(member, property):
            lines += [f"- property `{member_name}`: {_doc(member.fget).splitlines()[0]}"]
            continue
        fn = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
        kind = "classmethod " if isinstance(member, classmethod) else ""
        first, _, rest = _doc(fn).partition("\n")
        lines += [f"- {kind}`{member_name}{signature(fn)}`: {first}"]
        lines += [f"  {line}" if line else "" for line in rest.strip("\n").splitlines()]
    return lines + [""]


def _config_settings() -> list[str]:
    from harness.config import OPTIONS, Config

    hints = {k: v for k, v in inspect.get_annotations(Config).items()}
    lines = ["#### Settings", "",
             "Each is `--jobquake-<key>`, `JOBQUAKE_<KEY>`, ini `jobquake_<key>` or `<key>` in "
             "`[tool.jobquake]` (tables only there); `jobquake config` prints the effective values.", "",
             "| key | type | default | meaning |", "|---|---|---|---|"]
    for opt in OPTIONS:
        default = "random" if opt.key == "seed" else repr(opt.default)
        meaning = opt.help.replace("|", "\\|")
        lines.append(f"| `{opt.key}` | `{hints.get(opt.key, '?')}` | `{default}` | {meaning} |")
    return lines + [""]


def _entry(name: str, obj: Any) -> list[str]:
    if inspect.isclass(obj):
        lines = _class(name, obj)
        if obj.__module__.startswith("harness.config") and name == "Config":
            lines += _config_settings()
        return lines
    if callable(obj):
        return [f"### `{name}{signature(obj)}`", "", _doc(obj), ""]
    if isinstance(obj, (dict, tuple, list, frozenset, set)):
        return [f"### `{name}`", "", f"A {type(obj).__name__} of {len(obj)}: "
                + ", ".join(f"`{k if isinstance(k, str) else getattr(k, '__name__', k)}`" for k in obj), ""]
    return [f"### `{name}`", "", f"`{_clean(repr(obj))}`", ""]


def _names(module: Any) -> list[str]:
    """``__all__``, or else the classes the module defines."""
    if module.__name__ == "harness.config":
        return ["Config", "resolve"]
    if hasattr(module, "__all__"):
        return [n for n in module.__all__ if n not in SKIP]
    return sorted(n for n, v in vars(module).items()
                  if not n.startswith("_") and inspect.isclass(v) and v.__module__ == module.__name__)


def _homes() -> dict[int, str]:
    """id(object) -> the section (other than ``harness``) that documents it."""
    homes: dict[int, str] = {}
    for module_name, _what in SECTIONS[1:]:
        module = importlib.import_module(module_name)
        for name in _names(module):
            homes.setdefault(id(getattr(module, name)), module_name)
    return homes


def render() -> str:
    """The whole reference, as Markdown."""
    lines = ["# API reference", "",
             "Generated from the docstrings by `scripts/api_reference.py` (`make api-docs`); do not edit by hand.",
             ""]
    lines += [f"- [`{module}`](#{module.replace('.', '')}): {what}" for module, what in SECTIONS] + [""]
    homes = _homes()
    for module_name, _what in SECTIONS:
        module = importlib.import_module(module_name)
        lines += [f"## {module_name}", "", _doc(module).split("\n\n")[0], ""]
        for name in _names(module):
            obj = getattr(module, name)
            home = homes.get(id(obj)) if module_name == "harness" else None
            if home:  # the package re-exports it: documented once, where it lives
                lines += [f"- `harness.{name}`: see [`{home}`](#{home.replace('.', '')})", ""]
            else:
                lines += _entry(name, obj)
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/api.md is not up to date")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print(f"{OUT.relative_to(ROOT)} is out of date: run make api-docs", file=sys.stderr)
            return 1
        return 0
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
