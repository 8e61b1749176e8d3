"""What separates a committed scaffold from ``jobquake init``'s output: TODO fills, and anything else."""
from __future__ import annotations

import difflib

TODO = "TODO(jobquake init)"
REACH = 4  # lines after a TODO comment that belong to it (the commented key, a constant, a table header)


def todo_lines(lines: list[str]) -> set[int]:
    """Indexes of the lines a TODO covers: the TODO's own line and the few after it, up to a blank line."""
    covered: set[int] = set()
    for i, line in enumerate(lines):
        if TODO not in line:
            continue
        covered.add(i)
        for j in range(i + 1, min(len(lines), i + REACH + 1)):
            if not lines[j].strip():
                break
            covered.add(j)
    return covered


def edits_beyond_todo_fills(written: list[str], committed: list[str]) -> list[str]:
    """The committed lines that do not fill a TODO of ``written`` (init's output): a line added
    where no TODO line was replaced, or a replacement of a line no TODO covers."""
    covered = todo_lines(written)
    beyond: list[str] = []
    matcher = difflib.SequenceMatcher(a=written, b=committed, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        replaced = set(range(i1, i2))
        if op == "insert" or not replaced <= covered:
            beyond += committed[j1:j2] or [f"(removed) {line}" for line in written[i1:i2]]
    return beyond
