"""Run in a process of its own by ``AppClient.submit`` (as ``python -c``, from the app's folder): call
the app's submit function and print the new job's id on a marked line.

``argv``: ``module:function``, the arguments as JSON, the app's session factory (``module:name`` or
""), the job table's id column, the mark. Standalone: it imports nothing from jobquake, only the app.

* A parameter given as a dict whose type is a pydantic model is passed that model.
* A parameter not given that takes a database session (typed ``Session``/``AsyncSession``, injected
  with ``Depends(...)``, or named ``db`` / ``session``) gets one from the factory, closed after; the
  factory may be a sessionmaker or a dependency that yields one (``get_db``), finished after.
* A coroutine function is run to its end.
* The id is the result itself, or its ``<id column>`` / ``id`` (a dict, an ORM object, a pydantic model).
"""
import asyncio
import importlib
import inspect
import json
import os
import sys
import typing


def _load(spec):
    module, _, name = spec.partition(":")
    target = importlib.import_module(module)
    for part in name.split("."):
        target = getattr(target, part)
    return target


def _takes_session(name, param, hint):
    text = getattr(hint, "__name__", "") or str(param.annotation)
    depends = type(param.default).__name__ in ("Depends", "Security")
    return "Session" in text or depends or (param.annotation is param.empty and name in ("db", "session"))


def _arguments(fn, given, factory):
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # noqa: BLE001 - annotations the app's code cannot resolve here: use none
        hints = {}
    args, sessions = dict(given), []
    for name, param in inspect.signature(fn).parameters.items():
        hint = hints.get(name)
        if name in args:
            if isinstance(args[name], dict) and hasattr(hint, "model_validate"):
                args[name] = hint.model_validate(args[name])
        elif factory is not None and _takes_session(name, param, hint):
            args[name], close = _open(factory)
            sessions.append(close)
    return args, sessions


def _open(factory):
    """A session and what ends it: a sessionmaker's session and its ``close``, or what a dependency
    yields and the dependency's own ending (its ``with`` block closes it, as FastAPI ends it)."""
    made = factory()
    if inspect.isgenerator(made):
        return next(made), made.close
    return made, made.close


def _job_id(result, column):
    if isinstance(result, dict):
        return result.get(column, result.get("id"))
    for attr in (column, "id"):
        if not isinstance(result, (str, int, float)) and hasattr(result, attr):
            return getattr(result, attr)
    return result


def _close(sessions):
    for close in sessions:
        close()


async def _awaited(fn, args, sessions, column):
    try:
        return _job_id(await fn(**args), column)
    finally:
        for close in sessions:
            ended = close()
            if inspect.isawaitable(ended):  # an AsyncSession's close
                await ended


def main(spec, given, session_spec, column, mark):
    if os.environ.get("DJANGO_SETTINGS_MODULE"):  # a Django project's code needs its app registry first
        import django

        django.setup()
    fn = _load(spec)
    factory = _load(session_spec) if session_spec else None
    args, sessions = _arguments(fn, json.loads(given), factory)
    if inspect.iscoroutinefunction(fn):
        job_id = asyncio.run(_awaited(fn, args, sessions, column))
    else:
        try:
            job_id = _job_id(fn(**args), column)  # read before the session closes (an ORM object may load it)
        finally:
            _close(sessions)
    print(mark + json.dumps(job_id, default=str), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:6])
