"""docs/reference/invariants.md: every invariant, when it runs, the evidence it reads, its options.

From the checker registry (``harness.checks.registry.ALL_CHECKERS``,
``GLOBAL_INVARIANTS``), the evidence each declares (``@invariant(needs=...)``),
the evidence that switches the generic ones on (``harness.checks.generic``)
and the docstrings of the checkers' modules: a checker added to the registry
appears here with nothing else to write.
"""
from __future__ import annotations

import sys

from docgen import text

INTRO = """
An invariant is a pure function of the run's history and the final database snapshot; it answers
`valid`, `invalid` (with a counterexample) or `unknown` (the evidence it needs is missing, with the
reason). `unknown` fails a test unless `on_unknown = "warn"`
(see [Evidence and `unknown`](../explanation/evidence.md)).

When each runs:

- **after every scenario**: the global invariants;
- **where their evidence exists**: the generic invariants run after every scenario whose run produced
  the evidence named below (an undecided one is then left out of the verdict);
- **when asked**: `@pytest.mark.jobquake(checks=["name", ...])`, with options
  `options={"name": {...}}`; asked by name, an invariant always runs and says `unknown` without its
  evidence;
- `faults_landed` runs whenever a scenario injects a fault.
"""


def _when(checker, name: str) -> str:
    from harness.checks.generic import WHERE_EVIDENCE
    from harness.checks.registry import GLOBAL_INVARIANTS

    if checker in GLOBAL_INVARIANTS:
        return "after every scenario"
    switches = {checker_: needs for checker_, needs in WHERE_EVIDENCE}
    if checker in switches:
        return "where its evidence exists: " + ", ".join(f"`{need.name}`" for need in switches[checker])
    if name == "faults_landed":
        return "whenever a scenario injects a fault"
    return "when asked for by name"


def _needs(checker) -> list[str]:
    from harness.checks.runner import checker_needs

    needs = checker_needs(checker)
    if not needs:
        return ["- **evidence**: read from the history as the checker goes (see below)"]
    return ["- **evidence**: " + "; ".join(f"`{need.name}` ({need.description})" for need in needs)]


def _options(checker) -> list[str]:
    shown = text.signature(checker, skip=2)
    params = shown.split(" -> ")[0]
    if params == "()":
        return ["- **options**: none"]
    return [f"- **options**: `{params[1:-1]}`"]


def _section(checker) -> list[str]:
    from harness.checks.runner import checker_name

    name = checker_name(checker)
    module = sys.modules[checker.__module__]
    return [f"## `{name}`", "", f"*{text.summary(checker)}*", "",
            f"- **runs**: {_when(checker, name)}", *_needs(checker), *_options(checker),
            f"- **code**: `{checker.__module__}`", "", text.doc(module), ""]


def _summary_table() -> list[str]:
    from harness.checks.registry import ALL_CHECKERS
    from harness.checks.runner import checker_name

    rows = [(f"[`{checker_name(c)}`](#{checker_name(c)})", _when(c, checker_name(c)), text.summary(c))
            for c in ALL_CHECKERS]
    return text.table(("invariant", "runs", "holds when"), rows)


def render() -> str:
    from harness.checks.registry import ALL_CHECKERS

    body = _summary_table() + [""]
    for checker in ALL_CHECKERS:
        body += _section(checker)
    return text.page("Invariants reference", INTRO, body)


def readme_block() -> str:
    """README.md's list of the invariants: each with when it runs and the evidence it reads."""
    from harness.checks.generic import WHERE_EVIDENCE
    from harness.checks.registry import ALL_CHECKERS
    from harness.checks.runner import checker_name, checker_needs

    switches = {checker_: needs for checker_, needs in WHERE_EVIDENCE}
    rows = []
    for checker in ALL_CHECKERS:
        name = checker_name(checker)
        read = dict.fromkeys(need.name for need in [*checker_needs(checker), *switches.get(checker, ())])
        needs = ", ".join(f"`{need}`" for need in read) or "the run's events, as it goes"
        rows.append((f"[`{name}`](docs/reference/invariants.md#{name})", _when(checker, name).split(":")[0],
                     needs))
    return "\n".join(text.table(("invariant", "runs", "evidence it reads"), rows))
