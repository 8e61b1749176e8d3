"""Put a scaffold in place: append the config section, create the scenario files; never overwrite."""
from __future__ import annotations

from pathlib import Path

from harness.errors import HarnessError
from harness.scaffold.render import Scaffold


class InitError(HarnessError):
    """``jobquake init`` would have overwritten something, or has nowhere to write."""


def conflicts(root: Path, scaffold: Scaffold, has_section: bool) -> list[str]:
    """What exists already and would be overwritten."""
    found = [f"{root / 'pyproject.toml'} already has a [tool.jobquake] section"] if has_section else []
    found += [f"{root / rel} exists" for rel in scaffold.files if (root / rel).exists()]
    return found


def write(root: Path, scaffold: Scaffold, *, has_section: bool) -> list[Path]:
    """Append the section to pyproject.toml and create the scenario files; the paths written."""
    root = Path(root)
    clash = conflicts(root, scaffold, has_section)
    if clash:
        raise InitError("jobquake init writes nothing over what exists:\n  " + "\n  ".join(clash)
                        + "\nmove those aside (or run `jobquake init --dry-run` to see what it would write)")
    pyproject = root / "pyproject.toml"
    before = pyproject.read_text() if pyproject.exists() else ""
    separator = "" if not before or before.endswith("\n\n") else ("\n" if before.endswith("\n") else "\n\n")
    pyproject.write_text(before + separator + scaffold.config + scaffold.pytest_section)
    written = [pyproject]
    for rel, text in scaffold.files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("x") as handle:  # "x": fails rather than overwrite, even in a race
            handle.write(text)
        written.append(path)
    return written
