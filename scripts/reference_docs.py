"""Write the docs site's generated reference pages (docs/reference/) and README.md's generated blocks.

Run ``make reference-docs`` (or ``python scripts/reference_docs.py``) after
changing a public name, a docstring, a config key, a fault, a failpoint, an
invariant or a command-line option; ``--check`` exits 1 when a committed page
is out of date (``tests/quality/test_reference_docs.py`` makes the same check).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DOCS = ROOT / "docs"
sys.path[:0] = [str(HERE), str(ROOT)]  # docgen, and harness / refapp from this checkout

import docgen  # noqa: E402 - after the path above


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a page is not up to date")
    args = parser.parse_args(argv)
    stale = []
    for page in docgen.PAGES:
        path, text = DOCS / page, docgen.render(page)
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(page)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote docs/{page}")
    readme = ROOT / "README.md"
    current = readme.read_text(encoding="utf-8")
    text = docgen.readme(current)
    if args.check and text != current:
        stale.append("README.md")
    elif text != current:
        readme.write_text(text, encoding="utf-8")
        print("wrote README.md's generated blocks")
    if stale:
        print(f"out of date: {', '.join(stale)}; run make reference-docs", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
