"""docs/reference/config.md: every configuration key, its type, default and what it does.

From ``harness.config.OPTIONS`` (the keys), ``Config``'s annotations (the
types), ``RANGES`` (bounds) and the nightly table's own keys
(``harness.nightly.settings``): a key added there appears here.
"""
from __future__ import annotations

import dataclasses
import inspect

from docgen import text

INTRO = """
jobquake reads one configuration, resolved once per run. A key can be written in five
places; the first that has it wins:

1. the command line, `--jobquake-<key>` (dashes for underscores): `pytest --jobquake-backend docker`;
2. the environment, `JOBQUAKE_<KEY>`: `JOBQUAKE_TIME_SCALE=0.05`;
3. the pytest ini file, `jobquake_<key>`;
4. `[tool.jobquake]` in the project's `pyproject.toml`;
5. the default below.

Tables (their type says "table only") can be written in `pyproject.toml` only. `jobquake config` prints every
effective value and where it came from. An unknown key, or a value of the wrong type or out of range,
stops the run with an error naming the key and where it was written.
"""


def _default(opt) -> str:
    if opt.key == "seed":
        return "random, printed"
    value = opt.default
    if isinstance(value, tuple):
        value = list(value)
    return f"`{value!r}`"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _type(hints: dict, opt) -> str:
    hint = hints.get(opt.key, "?")
    return f"`{hint}`" + ("" if opt.scalar else " (table only)")


def _settings() -> list[str]:
    from harness.config import OPTIONS, RANGES, Config

    hints = inspect.get_annotations(Config)
    rows = []
    for opt in OPTIONS:
        meaning = opt.help
        if opt.key in RANGES:
            low, high = RANGES[opt.key]
            meaning += f" (from {_number(low)} to {_number(high)})"
        rows.append((f"`{opt.key}`", _type(hints, opt), _default(opt), meaning))
    return text.table(("key", "type", "default", "what it does"), rows)


def _nightly() -> list[str]:
    from harness.nightly import settings

    fields = {f.name: f for f in dataclasses.fields(settings.NightlySettings)}
    rows = []
    for key in settings.KEYS:
        field = fields[key]
        default = field.default if field.default is not dataclasses.MISSING else ""
        if isinstance(default, tuple):
            default = list(default)
        rows.append((f"`{key}`", f"`{field.type}`", f"`{default!r}`"))
    lines = ["## `[tool.jobquake.nightly]`", "",
             "What `jobquake nightly` reads (see [Nightly runs](../howto/nightly.md)). An annotated example, "
             "from `harness/nightly/settings.py`:", "", "```toml"]
    example = inspect.getdoc(settings).split("\n\n")[1]
    lines += [line[4:] if line.startswith("    ") else line for line in example.splitlines()]
    lines += ["```", ""]
    return lines + text.table(("key", "type", "default"), rows) + [""]


def render() -> str:
    from harness.stack.stack import PROCESS_KEYS

    keys = ", ".join(f"`{key}`" for key in sorted(PROCESS_KEYS))
    body = ["## `[tool.jobquake]`", "", *_settings(), "",
            "## `[tool.jobquake.processes.<name>]`", "",
            f"One app process the stack starts beside the workers. Its keys: {keys}. `command` is a "
            "template (`{port}`, `{name}` and every stack value); `ready` is `http:/path`, `log:<regex>` "
            "or `tcp`. See [Attach your own app](../tutorial/your-app.md).", "",
            *_nightly()]
    return text.page("Configuration reference", INTRO, body)
