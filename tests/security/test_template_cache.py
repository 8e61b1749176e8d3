"""The cached template cluster: the server's user cannot change it, and a changed one is never used."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from harness._ports import free_port, release_port
from harness.stack import template_cache
from harness.stack.postgres import PostgresService
from harness.stack.server_user import unprivileged_user
from tests.security.conftest import SYSTEM_PYTHON

pytestmark = pytest.mark.integration

PLANT = """
import os, sys
template = sys.argv[1]
results = {}
for name, path in (("conf", os.path.join(template, "postgresql.conf")),
                   ("auto", os.path.join(template, "postgresql.auto.conf")),
                   ("new", os.path.join(template, "planted.conf"))):
    try:
        with open(path, "a") as fh:
            fh.write("shared_preload_libraries = 'planted'\\n")
        results[name] = "written"
    except OSError as exc:
        results[name] = type(exc).__name__
print(results)
"""


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A cache of our own (the machine's is shared by every run), where the server's user can reach it
    (pytest's temporary folders are closed to other users)."""
    parent = Path(tempfile.mkdtemp(prefix="jq-cache-", dir="/var/tmp"))
    parent.chmod(0o711)
    monkeypatch.setenv("JOBQUAKE_CACHE_DIR", str(parent / "cache"))
    yield parent / "cache"
    shutil.rmtree(parent)


@contextmanager
def started(workdir: Path) -> Iterator[PostgresService]:
    port = free_port()
    svc = PostgresService("postgres", port=port, workdir=workdir)
    try:
        with svc:
            yield svc
    finally:
        svc.remove_data()
        release_port(port)


def test_the_servers_user_cannot_change_the_cached_template(cache, tmp_path):
    user = unprivileged_user()
    if user is None:
        pytest.skip("as an ordinary user the server runs as that user, who owns the cache anyway")
    with started(tmp_path / "pg"):
        (template,) = [p for p in cache.iterdir() if p.is_dir()]
        tried = subprocess.run([SYSTEM_PYTHON, "-I", "-c", PLANT, str(template)], capture_output=True, text=True,
                               user=user, extra_groups=[], group=user)
        assert tried.stdout.strip() == str({"conf": "PermissionError", "auto": "PermissionError",
                                            "new": "PermissionError"}), tried
        assert template_cache.intact(template) is not None


def test_a_changed_template_is_made_again_and_its_planted_setting_never_runs(cache, tmp_path, capfd):
    with started(tmp_path / "first") as svc:
        assert not svc.used_template_cache
    (template,) = [p for p in cache.iterdir() if p.is_dir()]
    conf = template / "postgresql.conf"
    stat = conf.stat()
    with open(conf, "a") as fh:  # as whoever could still write it (an older cache, a careless root)
        fh.write("work_mem = '77MB'\n")
    os.utime(conf, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # even with its time put back
    assert template_cache.intact(template) is None
    with started(tmp_path / "second") as svc:
        assert not svc.used_template_cache, "the changed template was used"
        with svc.connect() as conn:
            assert conn.execute("SHOW work_mem").fetchone() != ("77MB",)
    assert "changed since it was made; making it again" in capfd.readouterr().err
    with started(tmp_path / "third") as svc:
        assert svc.used_template_cache  # the control: an intact template is reused
