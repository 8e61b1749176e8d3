"""The fenced code blocks of the docs' Markdown pages, with where each is.

A block is ```` ```lang ```` ... ```` ``` ````; pymdownx.snippets lines
(``--8<-- "path"``) stand for the file they include.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
# the pages written by hand, whose every block is checked (the reference pages are generated)
PAGES = sorted([*DOCS.glob("*.md"), *DOCS.glob("tutorial/*.md"), *DOCS.glob("howto/*.md"),
                *DOCS.glob("explanation/*.md"), ROOT / "README.md", ROOT / "benchmarks" / "README.md"])
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```\s*$", re.M | re.S)
SNIPPET = re.compile(r'^\s*--8<--\s+"([^"]+)"\s*$')


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def snippet(self) -> Path | None:
        """The file a snippet-only block includes, else None."""
        lines = [line for line in self.text.splitlines() if line.strip()]
        match = SNIPPET.match(lines[0]) if len(lines) == 1 else None
        return ROOT / match.group(1) if match else None


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        indent = len(match.group("indent"))
        body = "\n".join(line[indent:] for line in match.group("body").splitlines())
        found.append(Block(page, text.count("\n", 0, match.start()) + 1, match.group("lang"), body))
    return found


def all_blocks(lang: str | None = None, pages: list[Path] | None = None) -> list[Block]:
    return [b for page in (pages or PAGES) for b in blocks(page) if lang is None or b.lang == lang]


def block_id(block: Block) -> str:
    return block.where
