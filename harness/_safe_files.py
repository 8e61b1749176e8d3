"""Writing a file in a folder without following anything planted there.

``write_replacing`` writes to a fresh name in the same folder, made with
``O_CREAT | O_EXCL | O_NOFOLLOW`` (a name that exists, a symlink included,
is never opened), then renames it over the target: readers see the whole old
file or the whole new one, and a symlink planted under the target's name is
replaced, not written through. ``open_appending`` opens a file to append to
without following a symlink; ``folder_status`` reads a folder's owner and mode
on a descriptor opened that way, not through a name that may change meanwhile.
"""
from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import IO


def write_replacing(path: str | os.PathLike[str], text: str, mode: int = 0o644) -> None:
    """Replace ``path`` with ``text`` (UTF-8) in one step."""
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def open_appending(path: str | os.PathLike[str], mode: int = 0o644) -> IO[str]:
    """``path`` opened to append text to (made if missing); OSError (ELOOP) for a symlink."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, mode)
    return os.fdopen(fd, "a", encoding="utf-8")


def folder_status(path: str | os.PathLike[str]) -> os.stat_result:
    """The status of the folder ``path`` itself, read on its descriptor; OSError when it is a symlink
    (ELOOP) or not a folder (ENOTDIR)."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        return os.fstat(fd)
    finally:
        os.close(fd)
