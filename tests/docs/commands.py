"""Does a shell command the docs show exist? Programs, subcommands, options, make targets, files.

``problems(line)`` reads one command line as a shell would split it and
answers with what does not exist: a ``jobquake`` subcommand or option its
parser does not know, a pytest option ``pytest --help`` does not list, a make
target the Makefile lacks, a script or module that is not there, an option a
benchmark script does not declare. A program it has no rule for is a problem
too, so a new kind of command gets a rule before it gets into the docs.
"""
from __future__ import annotations

import argparse
import functools
import importlib.util
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
# programs whose use the docs show without options to check (their own tools, the system's)
PLAIN = {"cd", "git", "apt-get", "kubectl", "docker", "pip", "make-venv", "python3-venv", "echo", "ls", "open",
         "date", "time", "flock", "export", "ps", "env"}
SHELL_WORDS = {"&&", "||", ";", "|"}


@functools.cache
def pytest_options() -> frozenset[str]:
    """Every long option ``pytest --help`` lists (with the jobquake plugin's and the installed plugins')."""
    out = subprocess.run([str(VENV_BIN / "pytest"), "--help", "-p", "no:cacheprovider"], capture_output=True,
                         text=True, cwd=ROOT, timeout=120).stdout
    return frozenset(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", out))


@functools.cache
def jobquake_parsers() -> dict[str, argparse.ArgumentParser]:
    from harness.cli import build_parser

    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


@functools.cache
def make_targets() -> frozenset[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return frozenset(re.findall(r"^([\w.-]+):", text, re.M))


def _options(args: list[str]) -> list[str]:
    return [a.split("=", 1)[0] for a in args if a.startswith("-") and a != "-"]


def _jobquake(args: list[str]) -> list[str]:
    if not args:
        return ["jobquake without a command"]
    parsers = jobquake_parsers()
    if args[0] not in parsers:
        return [f"jobquake has no command {args[0]!r} (known: {', '.join(parsers)})"]
    own, to_pytest = _split_at_dashes(args[1:])
    known = {s for action in parsers[args[0]]._actions for s in action.option_strings}
    found = [f"jobquake {args[0]} has no option {o}" for o in _options(own) if o not in known]
    return found + _pytest(to_pytest)


def _split_at_dashes(args: list[str]) -> tuple[list[str], list[str]]:
    """A command's own arguments, and those after ``--`` (for every pytest run it makes)."""
    if "--" in args:
        index = args.index("--")
        return args[:index], args[index + 1:]
    return args, []


def _pytest(args: list[str]) -> list[str]:
    known = pytest_options()
    return [f"pytest has no option {o}" for o in _options(args) if o not in known]


def _python(args: list[str]) -> list[str]:
    if not args:
        return []
    if args[0] == "-m":
        module, rest = args[1], args[2:]
        if module == "venv":
            return []
        if module == "pytest":
            return _pytest(rest)
        if importlib.util.find_spec(module) is None:
            return [f"no module {module!r}"]
        return []
    if args[0] == "-c":
        return []
    return _script(args[0], args[1:])


def _script(path: str, args: list[str]) -> list[str]:
    script = ROOT / path
    if not script.is_file():
        return [f"no file {path}"]
    if script.suffix != ".py":
        return []
    source = script.read_text(encoding="utf-8")
    declared = set(re.findall(r"""["'](--?[\w-]+)["']""", source))
    return [f"{path} declares no option {o}" for o in _options(args) if o not in declared]


def _make(args: list[str]) -> list[str]:
    targets = [a for a in args if "=" not in a and not a.startswith("-")]
    return [f"the Makefile has no target {t!r}" for t in targets if t not in make_targets()]


def _env_assignment(word: str) -> list[str]:
    from harness.config import BY_KEY, RESERVED_ENV

    name = word.split("=", 1)[0]
    if name.startswith("JOBQUAKE_") and name not in RESERVED_ENV and name[9:].lower() not in BY_KEY:
        return [f"{name} is no jobquake setting"]
    return []


def _one(words: list[str]) -> list[str]:
    found: list[str] = []
    while words and re.match(r"^[A-Za-z_]\w*=", words[0]):
        found += _env_assignment(words.pop(0))
    while words and words[0] == "sudo":
        words = [w for w in words[1:] if not w.startswith("--preserve-env")]
    if not words:
        return found
    program, args = Path(words[0]).name, words[1:]
    rules = {"jobquake": _jobquake, "pytest": _pytest, "python": _python, "python3": _python, "make": _make,
             "bash": lambda a: _script(a[0], a[1:]) if a else [], "sh": lambda a: [], "mkdocs": _mkdocs}
    if program in rules:
        return found + rules[program](args)
    if program.startswith(("scripts/", "benchmarks/")) or words[0].startswith(("scripts/", "benchmarks/")):
        return found + _script(words[0], args)
    if program in PLAIN:
        return found
    return found + [f"no rule to check the program {words[0]!r}"]


def _mkdocs(args: list[str]) -> list[str]:
    return [] if args and args[0] in ("build", "serve") else [f"mkdocs {' '.join(args)}"]


def normalised(line: str) -> str:
    """CI platforms' expressions replaced by a plain word: ``${{ matrix.shard }}``, ``$((i - 1))``."""
    line = re.sub(r"\$\{\{[^}]*\}\}", "X", line)
    return re.sub(r"\$\(\([^)]*\)\)", "0", line)


def problems(line: str) -> list[str]:
    """What in one command line (``a && b | c`` included) does not exist."""
    words = shlex.split(normalised(line), comments=True)
    found, current = [], []
    for word in [*words, ";"]:
        if word in SHELL_WORDS:
            if current:
                found += _one(current)
            current = []
        else:
            current.append(word)
    return found


def lines(script: str) -> list[str]:
    """The command lines of a shell block (continuations joined; prompts and blank lines left out)."""
    joined = re.sub(r"\\\n\s*", " ", script)
    return [line.removeprefix("$ ") for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#")]
