"""docs/api.md is what scripts/api_reference.py makes of the docstrings as they are now."""
from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("api_reference", ROOT / "scripts" / "api_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_api_reference_is_up_to_date():
    generated = _generator().render()
    committed = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert committed == generated, "docs/api.md is out of date: run `make api-docs` and commit it"


def test_the_reference_covers_the_public_names():
    import harness
    import harness.checks

    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    names = [*harness.__all__, *(n for n in harness.checks.__all__ if n in harness.checks.CHECKERS)]
    missing = [n for n in names if n != "__version__" and f"{n}" not in text]
    assert missing == []
    assert "### class `Run(" in text and "| `time_scale` | `float` |" in text
