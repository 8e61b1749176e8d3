"""docs/reference/api.md: the public names of jobquake, with their signatures and docstrings.

What is public is what the modules say: each section lists a module's
``__all__``; ``Config``'s settings have a page of their own (config.md).
"""
from __future__ import annotations

import dataclasses
import importlib
import inspect
from typing import Any, Iterator

from docgen import text

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


def _anchor(module: str) -> str:
    return module.replace(".", "")


def _own_members(cls: type) -> Iterator[tuple[str, Any]]:
    """Public methods and properties defined by ``cls`` itself, in source order."""
    for name, member in vars(cls).items():
        if not name.startswith("_") and hasattr(member, "__set_name__") and inspect.isfunction(getattr(cls, name)):
            member = getattr(cls, name)  # a method made by a descriptor (Faults' FaultMethod): its function
        if name.startswith("_") or not (inspect.isfunction(member) or isinstance(member, (property, classmethod,
                                                                                          staticmethod))):
            continue
        yield name, member


def _class(name: str, cls: type) -> list[str]:
    bases = [b.__name__ for b in cls.__bases__ if b is not object]
    many_fields = dataclasses.is_dataclass(cls) and len(dataclasses.fields(cls)) > 8
    head = f"### class `{name}{'(...)' if many_fields else text.signature(cls)}`"
    lines = [head + (f" ({', '.join(bases)})" if bases else ""), "", text.doc(cls), ""]
    for member_name, member in _own_members(cls):
        if isinstance(member, property):
            lines += [f"- property `{member_name}`: {text.summary(member.fget)}"]
            continue
        fn = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
        kind = "classmethod " if isinstance(member, classmethod) else ""
        first, _, rest = text.doc(fn).partition("\n")
        lines += [f"- {kind}`{member_name}{text.signature(fn)}`: {first}"]
        lines += [f"    {line}" if line else "" for line in rest.strip("\n").splitlines()]
    if name == "Config" and cls.__module__.startswith("harness.config"):
        lines += ["", "Its settings, one per key: [configuration reference](config.md)."]
    return lines + [""]


def _entry(name: str, obj: Any) -> list[str]:
    if inspect.isclass(obj):
        return _class(name, obj)
    if callable(obj):
        return [f"### `{name}{text.signature(obj)}`", "", text.doc(obj), ""]
    if isinstance(obj, (dict, tuple, list, frozenset, set)):
        return [f"### `{name}`", "", f"A {type(obj).__name__} of {len(obj)}: "
                + ", ".join(f"`{k if isinstance(k, str) else getattr(k, '__name__', k)}`" for k in obj), ""]
    return [f"### `{name}`", "", f"`{text.clean(repr(obj))}`", ""]


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
    """The whole API reference, as Markdown."""
    body = [f"- [`{module}`](#{_anchor(module)}): {what}" for module, what in SECTIONS] + [""]
    homes = _homes()
    for module_name, _what in SECTIONS:
        module = importlib.import_module(module_name)
        body += [f"## {module_name}", "", text.doc(module).split("\n\n")[0], ""]
        for name in _names(module):
            obj = getattr(module, name)
            home = homes.get(id(obj)) if module_name == "harness" else None
            if home:  # the package re-exports it: documented once, where it lives
                body += [f"- `harness.{name}`: see [`{home}`](#{_anchor(home)})", ""]
            else:
                body += _entry(name, obj)
    intro = ("Every public name of the `harness` package, with its signature and docstring. A scenario "
             "needs few of them: `Run` (the `jq` fixture), `wait_until`, the fault moments "
             "(`InFlight`, `AtFailpoint`, `Queued`, `Now`) and the errors it may expect.")
    return text.page("API reference", intro, body)
