"""Loading: merge the command line, environment, ini and pyproject.toml into one ``Config``, with provenance.

Precedence, highest first: command line (``--jobquake-x``), environment
(``JOBQUAKE_X``), pytest ini (``jobquake_x``), ``[tool.jobquake]`` in
pyproject.toml, then the default. Every value remembers where it came from,
so ``jobquake config`` can say why a setting has the value it has. Unknown
keys and invalid values are errors that name the key and the source.
Also here: importing the app's ``'module:function'`` settings.
"""
from __future__ import annotations

import os
import random
import tomllib
from pathlib import Path
from typing import Any, Mapping, cast

from harness.config.options import BY_KEY, OPTIONS, RANGES, RESERVED_ENV, Option
from harness.config.settings import Config
from harness.config.validators import within
from harness.errors import ConfigError

__all__ = ["env_name", "find_pyproject", "load_callable", "read_ini", "read_pyproject", "resolve"]


def _did_you_mean(key: str) -> str:
    import difflib

    close = difflib.get_close_matches(key, BY_KEY, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def env_name(key: str) -> str:
    return "JOBQUAKE_" + key.upper()


def find_pyproject(start: Path) -> Path | None:
    for folder in [start, *start.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def read_pyproject(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}", source=str(path)) from exc
    return cast("dict[str, Any]", data.get("tool", {}).get("jobquake", {}))


def resolve(
    *,
    cli: Mapping[str, Any] | None = None,
    ini: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    pyproject: Path | None = None,
) -> Config:
    """Merge every source into one Config; raise ConfigError naming key and source."""
    environ = os.environ if environ is None else environ
    layers: list[tuple[str, Mapping[str, Any]]] = []
    layers.append(("command line", {k: v for k, v in (cli or {}).items() if v is not None}))
    layers.append(("environment", _from_env(environ)))
    layers.append(("ini", {k: v for k, v in (ini or {}).items() if v not in (None, "", [])}))
    table = read_pyproject(pyproject)
    layers.append((f"[tool.jobquake] in {pyproject}", table))
    for source, layer in layers:
        for key in layer:
            if key not in BY_KEY:
                raise ConfigError(f"unknown key {key!r} ({source}){_did_you_mean(key)}; known keys: "
                                  f"{', '.join(BY_KEY)}", key=key, source=source)
            if not BY_KEY[key].scalar and source in ("command line", "environment", "ini"):
                raise ConfigError(f"key {key!r} ({source}) is a table: set it in [tool.jobquake]",
                                  key=key, source=source)
    values, sources = {}, {}
    for opt in OPTIONS:
        values[opt.key], sources[opt.key] = _pick(opt, layers)
    if values["seed"] is None:
        values["seed"], sources["seed"] = random.SystemRandom().randrange(2**31), "random (no seed given)"
    root = pyproject.parent if pyproject else Path.cwd()
    return Config.from_values(values, sources, root)


def _from_env(environ: Mapping[str, str]) -> dict[str, str]:
    found = {}
    for name, value in environ.items():
        if name.startswith("JOBQUAKE_") and name not in RESERVED_ENV:
            found[name[len("JOBQUAKE_"):].lower()] = value
    return found


def _pick(opt: Option, layers: list[tuple[str, Mapping[str, Any]]]) -> tuple[Any, str]:
    for source, layer in layers:
        if opt.key in layer:
            raw = layer[opt.key]
            try:
                return within(RANGES.get(opt.key), opt.parse(raw)), source
            except (TypeError, ValueError) as exc:
                name = env_name(opt.key) if source == "environment" else opt.key
                raise ConfigError(f"invalid value {raw!r} for {name!r} ({source}): {exc}",
                                  key=opt.key, source=source) from exc
    return opt.default, "default"


def read_ini(start: Path) -> tuple[dict[str, Any], str | None]:
    """``jobquake_*`` keys from the pytest ini file pytest would use (for the CLI, outside pytest)."""
    import configparser

    for folder in [start, *start.parents]:
        pytest_ini = folder / "pytest.ini"
        if pytest_ini.is_file():
            parser = configparser.ConfigParser(interpolation=None)
            parser.read(pytest_ini)
            section = dict(parser["pytest"]) if parser.has_section("pytest") else {}
            return _strip_prefix(section), str(pytest_ini)
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            try:
                data = tomllib.loads(pyproject.read_text())
            except tomllib.TOMLDecodeError as exc:
                raise ConfigError(f"{pyproject}: not valid TOML: {exc}", source=str(pyproject)) from exc
            section = data.get("tool", {}).get("pytest", {}).get("ini_options")
            if section is not None:
                return _strip_prefix(section), str(pyproject)
    return {}, None


def _strip_prefix(section: Mapping[str, Any]) -> dict[str, Any]:
    return {k[len("jobquake_"):]: v for k, v in section.items() if k.startswith("jobquake_")}


def load_callable(spec: str, key: str, root: Path | None = None, *, kind: str = "function") -> Any:
    """Import 'module:function' named by config key ``key`` (the project folder ``root`` first on the path).

    ``kind``: what the key must name, "function" (anything callable) or "mapping" (a dict);
    anything else found there is a ConfigError saying which key and what it found.
    """
    found = _import_spec(spec, key, root)
    ok = callable(found) if kind == "function" else isinstance(found, Mapping)
    if not ok:
        raise ConfigError(f"{key} = {spec!r} names {_describe(found)}, not a {kind}: point {key} at "
                          f"the app's {kind} ('module:attribute')", key=key)
    return found


def _describe(value: Any) -> str:
    text = repr(value)
    return f"a {type(value).__name__} ({text[:60] + '...' if len(text) > 60 else text})"


def _import_spec(spec: str, key: str, root: Path | None) -> Any:
    import importlib
    import sys

    if root is not None and str(root) not in sys.path:
        sys.path.insert(0, str(root))  # the app's modules live in its project, as for its own tools

    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ConfigError(f"{key} = {spec!r}: expected 'module:function'", key=key)
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"{key} = {spec!r}: cannot import: {exc}", key=key) from exc
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the app's module failed as it loaded
        raise ConfigError(f"{key} = {spec!r}: importing {module_name} raised {exc!r}", key=key) from exc
