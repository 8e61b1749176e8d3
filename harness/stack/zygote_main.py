"""The zygote: one interpreter that has imported the app's libraries, forking each app process.

Every app process the stack starts (worker, API, relay...) spends most of
its start importing Celery, SQLAlchemy, httpx, boto3 before it does anything
(``benchmarks/app_starts.py``), and a session starts dozens of them. This
process imports those libraries once; each app process is then a fork of it
that becomes ``python -m <module>`` (or a console script) in its own
session, environment, working folder and log, as a fresh interpreter would.

Run by path (``python zygote_main.py CONTROL_FD MODULE...``), so that it imports
nothing of jobquake: an app process must not find harness modules on its
path. The harness side is ``harness.stack.zygote``. The protocol, on the
control socket (a ``SOCK_SEQPACKET`` pair: one request per message)::

    harness -> zygote: a JSON request, with the log's fd and a status socket attached
    zygote -> status socket: "pid N\\n" once forked, then "exit CODE\\n" when it ends

CODE is a Popen-style return code (negative: killed by that signal). The
zygote ends when the control socket closes (its harness is gone); the
processes it forked live on, recorded by the harness for its reaper.
"""
import gc
import json
import os
import select
import signal
import socket
import sys
import tempfile

MAX_REQUEST = 1 << 20
# the last argument of the zygote's command line: room for a forked process's command line (see retitle)
ROOM = "--room="


def preload(modules):
    """Import what the app will; report each that is not installed, or that failed to import (not an
    error: apps differ, and an app module may need the app's environment, which the zygote has not)."""
    import importlib

    loaded, missing, failed = [], [], []
    for name in modules:
        try:
            importlib.import_module(name)
            loaded.append(name)
        except ImportError:
            missing.append(name)
        except Exception as exc:  # noqa: BLE001 - the app's code, raising what it likes: its processes import it again
            failed.append(f"{name} ({type(exc).__name__}: {_first_line(exc)})")
    print(f"zygote: preloaded {len(loaded)} module(s); not installed: {', '.join(missing) or 'none'}", flush=True)
    for entry in failed:
        print(f"zygote: not preloaded: {entry}", flush=True)
    gc.collect()
    gc.freeze()  # what is imported now is never collected: forks do not copy its pages by touching them


def _first_line(exc):
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else "no message"


def serve(control, base_path):
    """Fork one process per request until the control socket closes; returns in each forked child."""
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # only to wake select through the wakeup fd
    status = {}  # pid -> the status socket of the process
    while True:
        try:
            readable, _, _ = select.select([control, wake_r], [], [])
        except InterruptedError:
            continue
        if wake_r in readable:
            os.read(wake_r, 4096)
            reap(status)
        if control not in readable:
            continue
        msg, fds, _flags, _addr = socket.recv_fds(control, MAX_REQUEST, 2)
        if not msg:
            return None  # the harness is gone
        request = json.loads(msg)
        log_fd, status_fd = fds
        pid = os.fork()
        if pid == 0:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            for fd in (wake_r, wake_w, status_fd):
                os.close(fd)
            for sock in (control, *status.values()):
                sock.close()
            return request, log_fd, base_path
        os.close(log_fd)
        channel = socket.socket(fileno=status_fd)
        try:
            channel.sendall(f"pid {pid}\n".encode())
        except OSError:
            pass  # the harness stopped waiting for it: the exit is still reaped below
        status[pid] = channel
        reap(status)  # a process that died at once sent its SIGCHLD before it was in the table


def reap(status):
    while status:
        try:
            pid, wait_status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        channel = status.pop(pid, None)
        if channel is not None:
            try:
                channel.sendall(f"exit {os.waitstatus_to_exitcode(wait_status)}\n".encode())
            except OSError:
                pass  # the harness stopped listening: nothing to tell
            channel.close()


def become(request, log_fd, base_path):
    """Turn this fork into the requested program, as ``python -m`` / a script would start."""
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.close(devnull)
    os.close(log_fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # chosen again from this program's TMPDIR, not the zygote's
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    sys.stdout.reconfigure(write_through=unbuffered)
    sys.stderr.reconfigure(line_buffering=True)
    sys.dont_write_bytecode = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
    extra = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    script = request.get("script")
    first = os.path.dirname(os.path.realpath(script)) if script else os.getcwd()
    sys.path[:] = [first, *extra, *base_path]
    sys.argv = [script or "-m", *request["args"]]
    retitle(request["argv"])
    _site_customize()
    import runpy

    if script:
        runpy.run_path(script, run_name="__main__")
    else:
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)


def _site_customize():
    """Import ``sitecustomize`` from the new path, as interpreter start does (the
    instrumentation's is on the app's PYTHONPATH; the zygote had none of it)."""
    sys.modules.pop("sitecustomize", None)
    try:
        import sitecustomize  # noqa: F401
    except ImportError as exc:
        if exc.name != "sitecustomize":
            raise


def retitle(argv):
    """Show ``argv`` as this process's command line (``ps``, ``/proc/PID/cmdline``), as far as it fits.

    The kernel shows the memory that held the interpreter's own arguments
    (``arg_start``..``arg_end`` in ``/proc/self/stat``); Python keeps copies of
    them, so writing over it changes nothing else (``setproctitle`` does the same).
    """
    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[45]), int(fields[46])  # fields 48 and 49 of proc(5)
        title = b"\0".join(os.fsencode(a) for a in argv)[:end - start - 1]
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            mem.seek(start)
            mem.write(title + b"\0" * (end - start - len(title)))
    except (OSError, IndexError, ValueError):
        pass  # a kernel that hides them: the title stays the zygote's, nothing else changes


def main():
    here = os.path.dirname(os.path.realpath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != here]  # never shadow `redis` & co
    control = socket.socket(fileno=int(sys.argv[1]))
    modules = [m for m in sys.argv[2:] if not m.startswith(ROOM)]
    retitle([sys.executable, __file__, "(jobquake zygote)"])
    preload(modules)
    control.sendall(b"ready\n")
    forked = serve(control, list(sys.path))
    if forked is None:
        return
    become(*forked)  # the app's exit (SystemExit, an exception) ends this interpreter the usual way


if __name__ == "__main__":
    main()
