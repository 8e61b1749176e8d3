"""The attacker: a second, unprivileged user of this machine, made for the test and removed after.

These tests need root (to create the user). Elsewhere they skip with the
reason, except where ``JOBQUAKE_REQUIRE_ROOT_TESTS=1`` or ``CI=true`` says
they must run: there a skip would hide that the attacks were never tried.
"""
from __future__ import annotations

import os
import pwd
import secrets
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

ATTACK_TIMEOUT = 20  # seconds one attacker command may take
# the system's interpreter: ours may live where the attacker cannot read (root's home)
SYSTEM_PYTHON = "/usr/bin/python3"


def _required() -> bool:
    return os.environ.get("JOBQUAKE_REQUIRE_ROOT_TESTS") == "1" or os.environ.get("CI", "").lower() == "true"


@dataclass(frozen=True)
class Attacker:
    """A local user with no privileges and no group of ours."""

    name: str
    uid: int
    gid: int

    def run(self, argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        """Run ``argv`` as this user (its own groups only), from ``/``."""
        return subprocess.run(argv, user=self.uid, group=self.gid, extra_groups=[], cwd="/",
                              env={"PATH": "/usr/bin:/bin", "HOME": "/", **(env or {})},
                              capture_output=True, text=True, timeout=ATTACK_TIMEOUT)

    def python(self, code: str) -> subprocess.CompletedProcess:
        """Run Python ``code`` (standard library only) as this user."""
        return self.run([SYSTEM_PYTHON, "-I", "-c", code])

    def start(self, code: str, *args: str) -> subprocess.Popen:
        """Start Python ``code`` as this user in the background: it runs until its stdin closes."""
        return subprocess.Popen([SYSTEM_PYTHON, "-I", "-c", code, *args], user=self.uid, group=self.gid,
                                extra_groups=[], cwd="/", env={"PATH": "/usr/bin:/bin", "HOME": "/"},
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope="session")
def attacker() -> Iterator[Attacker]:
    if os.geteuid() != 0:
        reason = "the attacker tests create a second user with useradd, which needs root"
        if _required():
            pytest.fail(f"{reason}; JOBQUAKE_REQUIRE_ROOT_TESTS=1 or CI=true make them mandatory")
        pytest.skip(reason)
    name = f"jqattack{secrets.token_hex(3)}"
    subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                   check=True, capture_output=True)
    try:
        entry = pwd.getpwnam(name)
        yield Attacker(name, entry.pw_uid, entry.pw_gid)
    finally:
        subprocess.run(["userdel", name], check=False, capture_output=True)


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A fresh world-writable sticky folder, as /tmp is: where the attacker can create names first."""
    path = Path(tempfile.mkdtemp(prefix="jq-shared-", dir="/tmp"))
    path.chmod(0o1777 | stat.S_IRWXU)
    yield path
    shutil.rmtree(path, ignore_errors=True)  # never follows the symlinks planted in it
