"""One typed configuration, resolved once from every place a user can write it.

The package in four modules, by what changes together:

- ``options``: the option table (key, parser, default, help) and the bounds of numbers;
- ``settings``: ``Config``, one typed field per key;
- ``load``: ``resolve`` (command line, environment, ini, pyproject.toml, with where each
  value came from), ``read_ini``, ``load_callable``;
- ``validators``: the parsers; a value only a layer above config understands (a call-key
  pattern, a price table, a job-id expression) is checked by that layer through
  ``harness.setting_checks``.

The names below are the package's interface: import them from ``harness.config``.
"""
from __future__ import annotations

from harness.config.load import env_name, find_pyproject, load_callable, read_ini, read_pyproject, resolve
from harness.config.options import BY_KEY, DEFAULT_TERMINAL_STATES, OPTIONS, RANGES, RESERVED_ENV, Option
from harness.config.settings import Config

__all__ = ["BY_KEY", "Config", "DEFAULT_TERMINAL_STATES", "OPTIONS", "Option", "RANGES", "RESERVED_ENV",
           "env_name", "find_pyproject", "load_callable", "read_ini", "read_pyproject", "resolve"]
