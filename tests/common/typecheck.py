"""mypy run the way ``make typecheck`` runs it (pyproject.toml's [tool.mypy]), on files a test writes."""
from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# make typecheck's own cache: warm after a check of the tree as it is, so a test's run reads the harness's
# types from it; mypy replaces each cache file whole, so concurrent runs (xdist) at worst check a module again
CACHE = ROOT / ".mypy_cache"
LINE = re.compile(r"^(?P<path>[^:\n]+):(?P<line>\d+): (?P<kind>error|note): (?P<message>.*)$")


@dataclass(frozen=True)
class Finding:
    path: Path
    line: int
    message: str  # with its [code]

    def __str__(self) -> str:
        return f"{self.path.name}:{self.line}: {self.message}"


def mypy(files: list[Path], *flags: str) -> list[Finding]:
    """The errors mypy reports on ``files`` (none given: those [tool.mypy] lists), with the project's
    config, run from the checkout's root."""
    proc = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
                           "--cache-dir", str(CACHE), "--no-error-summary", "--show-error-codes",
                           *flags, *map(str, files)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    if proc.returncode not in (0, 1):  # 2: mypy itself failed (bad config, crash)
        raise RuntimeError(f"mypy exited {proc.returncode}:\n{proc.stdout}{proc.stderr}")
    found = []
    for line in proc.stdout.splitlines():
        match = LINE.match(line)
        if match and match["kind"] == "error":
            found.append(Finding(Path(match["path"]), int(match["line"]), match["message"]))
    if proc.returncode == 1 and not found:
        raise RuntimeError(f"mypy failed without an error line:\n{proc.stdout}{proc.stderr}")
    return found
