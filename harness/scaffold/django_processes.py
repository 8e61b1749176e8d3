"""A Django project's processes: its web server and celery beat, from its Procfile or compose file.

Each command is rewritten to run on loopback at the port the harness
gives it (``{port}``): gunicorn's ``--bind``, uvicorn's / daphne's host and
port, ``runserver``'s address (and ``--noreload``, whose watcher would fork
a second server). Beat keeps its schedule in memory (``celery.beat:Scheduler``):
a schedule file in the project would be shared by sessions side by side.
Worker lines are left out: ``worker_command`` starts the workers. Without a
Procfile or compose file: ``manage.py runserver``, and beat where
``CELERY_BEAT_SCHEDULE`` is set.
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path

from harness.scaffold.findings import Process

WEB_READY = "tcp"  # a port that accepts connections: no route of the app is assumed
BEAT_READY = "log:beat: Starting"  # celery beat's INFO line once its scheduler runs
BEAT_SCHEDULER = "celery.beat:Scheduler"
SERVERS = ("gunicorn", "uvicorn", "daphne", "runserver", "hypercorn")


def processes(root: Path, manage: str, celery_app: str | None, beat_schedule: bool) -> dict[str, Process]:
    """Process name -> its command, readiness and where it came from."""
    found: dict[str, Process] = {}
    folders = dict.fromkeys([root, (root / manage).parent])  # the project's, and manage.py's folder
    for source, lines in [d for folder in folders for d in _declared(folder)]:
        for name, command in lines:
            kind = _kind(command)
            if kind == "web" and not _has(found, "web"):
                found[_name(name, "web")] = Process(web(command), WEB_READY, f"{name}: {command} ({source})")
            elif kind == "beat" and not _has(found, "beat"):
                found[_name(name, "beat")] = Process(beat(command), BEAT_READY, f"{name}: {command} ({source})")
    if not _has(found, "web"):
        found["web"] = Process(f"python {manage} runserver 127.0.0.1:{{port}} --noreload", WEB_READY,
                               f"{manage}: Django's own server (no Procfile names a web process)")
    if beat_schedule and celery_app and not _has(found, "beat"):
        found["beat"] = Process(beat(f"celery -A {celery_app} beat"), BEAT_READY,
                                "CELERY_BEAT_SCHEDULE in the settings: celery beat sends the periodic tasks")
    return found


def _has(found: dict[str, Process], kind: str) -> bool:
    return any(_kind(p.command) == kind for p in found.values())


def _name(declared: str, default: str) -> str:
    return declared if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", declared) else default


def _kind(command: str) -> str | None:
    words = command.split()
    if "celery" in command and "beat" in words:
        return "beat"
    if any(server in word for word in words for server in SERVERS) and "worker" not in words:
        return "web"
    return None


def _declared(root: Path) -> list[tuple[str, list[tuple[str, str]]]]:
    out = []
    for path in (root / "Procfile", *sorted(root.glob("Procfile.*"))):
        if path.is_file():
            lines = [line.split(":", 1) for line in path.read_text().splitlines() if ":" in line
                     and not line.lstrip().startswith("#")]
            out.append((path.name, [(n.strip(), c.strip()) for n, c in lines]))
    for path in sorted([*root.glob("docker-compose*.y*ml"), *root.glob("compose*.y*ml")]):
        out.append((path.name, _compose_commands(path)))
    return out


def _compose_commands(path: Path) -> list[tuple[str, str]]:
    try:
        import yaml  # PyYAML, where installed: a compose file is read only if it can be
        services = (yaml.safe_load(path.read_text()) or {}).get("services") or {}
    except Exception:  # noqa: BLE001 - an unreadable compose file names nothing
        return []
    out = []
    for name, spec in services.items():
        command = (spec or {}).get("command") if isinstance(spec, dict) else None
        if isinstance(command, list):
            command = shlex.join(str(c) for c in command)
        if isinstance(command, str):
            out.append((str(name), command))
    return out


def web(command: str) -> str:
    """The web server's command, on loopback at ``{port}``."""
    args = [a for a in _program(command) if not a.startswith("$") and a != "--reload"]  # a reloader forks
    if "runserver" in args:
        at = args.index("runserver")
        rest = [a for a in args[at + 1:] if not re.fullmatch(r"[\d.:\[\]a-z]*:?\d+", a) and a != "--noreload"]
        return _join(args[:at + 1] + ["127.0.0.1:{port}", "--noreload"] + rest)
    args = _drop_options(args, {"--bind", "-b", "--host", "-h", "--port", "-p"})
    if args and "gunicorn" in args[0]:
        return _join(args + ["--bind", "127.0.0.1:{port}"])
    return _join(args + ["--host", "127.0.0.1", "--port", "{port}"]) if "daphne" not in command else \
        _join(args + ["-b", "127.0.0.1", "-p", "{port}"])


def beat(command: str) -> str:
    """celery beat's command, its schedule in memory and its INFO lines logged."""
    args = _drop_options(_program(command), {"-S", "--scheduler", "-s", "--schedule", "--pidfile",
                                               "-l", "--loglevel"})
    return _join(args + ["--loglevel", "INFO", "--scheduler", BEAT_SCHEDULER])


def _program(command: str) -> list[str]:
    """The command's words from its program on: a Procfile's ``VAR=value`` prefixes are the shell's."""
    args = shlex.split(command)
    while args and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", args[0]):
        args.pop(0)
    return args


def _join(args: list[str]) -> str:
    """A command line whose ``{port}`` stays readable (shlex.join would quote the braces)."""
    return " ".join(a if not re.search(r"[\s'\"$;&|]", a) else shlex.quote(a) for a in args)


def _drop_options(args: list[str], options: set[str]) -> list[str]:
    """``args`` without ``options`` and their values (``--opt value`` or ``--opt=value``)."""
    out, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg in options:
            skip = True
        elif not any(arg.startswith(o + "=") for o in options if o.startswith("--")):
            out.append(arg)
    return out
