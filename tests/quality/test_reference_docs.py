"""The docs site's reference pages are what scripts/docgen makes of the code as it is now.

A new config key, fault, failpoint action, invariant or command-line option, or
a changed docstring, makes a page stale until ``make reference-docs`` is run and
the page committed.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import docgen  # noqa: E402 - scripts/ is not a package on the path
from docgen import failpoints  # noqa: E402


@pytest.mark.parametrize("page", sorted(docgen.PAGES))
def test_the_committed_page_is_up_to_date(page):
    committed = (ROOT / "docs" / page).read_text(encoding="utf-8")
    assert committed == docgen.render(page), f"docs/{page} is out of date: run `make reference-docs` and commit it"


def test_the_readmes_generated_blocks_are_up_to_date():
    committed = (ROOT / "README.md").read_text(encoding="utf-8")
    assert committed == docgen.readme(committed), "README.md's generated blocks are out of date: run " \
                                                  "`make reference-docs` and commit it"


def test_the_api_page_covers_the_public_names():
    import harness
    import harness.checks

    text = (ROOT / "docs" / "reference" / "api.md").read_text(encoding="utf-8")
    names = [*harness.__all__, *(n for n in harness.checks.__all__ if n in harness.checks.CHECKERS)]
    assert [n for n in names if n != "__version__" and n not in text] == []
    assert "### class `Run(" in text


def test_every_config_key_fault_and_invariant_has_its_entry():
    from harness.checks import CHECKERS
    from harness.config import OPTIONS
    from harness.faults import FAULTS

    pages = {name: (ROOT / "docs" / "reference" / f"{name}.md").read_text(encoding="utf-8")
             for name in ("config", "faults", "invariants")}
    assert [o.key for o in OPTIONS if f"| `{o.key}` |" not in pages["config"]] == []
    assert [f for f in FAULTS if f"## `{f}`" not in pages["faults"]] == []
    assert [c for c in CHECKERS if f"## `{c}`" not in pages["invariants"]] == []


def test_every_failpoint_action_is_described():
    from harness.failpoints.spec import ACTIONS

    assert sorted(set(ACTIONS) - set(failpoints.ACTION_TEXT)) == []
    assert "(not described)" not in docgen.render("reference/failpoints.md")


def test_a_new_invariant_appears_by_itself(monkeypatch):
    """The invariants page is made from the registry: a checker added there is listed with its evidence."""
    from harness.checks import registry
    from harness.checks.needs import PAID_CALLS
    from harness.checks.runner import invariant

    @invariant("made_up_for_this_test", needs=(PAID_CALLS,))
    def made_up(history, snapshot, bound: float = 1.0):
        """Nothing made up ever holds."""

    monkeypatch.setattr(registry, "ALL_CHECKERS", (*registry.ALL_CHECKERS, made_up))
    page = docgen.render("reference/invariants.md")
    assert "## `made_up_for_this_test`" in page and "*Nothing made up ever holds.*" in page
    assert "`paid_calls` (" in page.split("## `made_up_for_this_test`")[1] and "bound: float = 1.0" in page
