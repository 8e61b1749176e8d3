"""Loads jobquake's instrumentation into this process, then any other sitecustomize.

The harness prepends this folder to ``PYTHONPATH`` of the app processes it
starts. Python imports one ``sitecustomize`` only (the first on the path),
so this one imports the next one itself: the app's or the system's keeps
working. A failure to load is written to stderr with its reason and leaves
the app running; the harness sees no "loaded" line and fails the start.
"""
import os
import sys


def _load_jobquake() -> None:
    if not os.environ.get("JOBQUAKE_INSTRUMENT_DIR"):
        return
    try:
        from harness.instrument._boot import activate

        activate()
    except BaseException as exc:  # noqa: BLE001 - report, never stop the app from starting
        import traceback

        reason = f"{type(exc).__name__}: {exc}"
        os.write(2, f"jobquake-instrument: FAILED to load: {reason} [pid {os.getpid()}]\n".encode())
        traceback.print_exc(file=sys.stderr)


def _chain() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    mine = sys.modules.pop("sitecustomize", None)
    saved = list(sys.path)
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    try:
        import sitecustomize  # noqa: F401 - the next one on the path, if any
    except ImportError as exc:
        if exc.name != "sitecustomize":
            raise
    finally:
        sys.path[:] = saved
        if "sitecustomize" not in sys.modules and mine is not None:
            sys.modules["sitecustomize"] = mine


_load_jobquake()
_chain()
