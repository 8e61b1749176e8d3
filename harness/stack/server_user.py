"""The unprivileged user servers run as when jobquake runs as root (Postgres refuses root).

The server gets that user's own group and supplementary groups, never the
caller's: a Postgres started by root with group 0 could read and write every
file of group root.
"""
from __future__ import annotations

import os
import pwd
from typing import Any

CANDIDATES = ("postgres", "nobody")


def unprivileged_user() -> str | None:
    """The user to run servers as: None when we are not root."""
    if os.geteuid() != 0:
        return None
    for name in CANDIDATES:
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise RuntimeError("running as root and neither a 'postgres' nor a 'nobody' user exists")


def shared_gid() -> int | None:
    """The group the run folders are shared with (traversal only), or None when not root."""
    user = unprivileged_user()
    return pwd.getpwnam(user).pw_gid if user else None


def popen_identity(user: str | None) -> dict[str, Any]:
    """Keyword arguments of ``subprocess.Popen`` that run as ``user`` with only that user's groups."""
    if user is None:
        return {}
    entry = pwd.getpwnam(user)
    return {"user": entry.pw_uid, "group": entry.pw_gid,
            "extra_groups": os.getgrouplist(user, entry.pw_gid)}
