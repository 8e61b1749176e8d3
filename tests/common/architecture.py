"""The layers of ``harness`` as declared, and the diagram of them drawn from the imports.

``LAYERS`` is the architecture: ``tests/quality/test_layers.py`` holds the
code to it, and ``render()`` draws it with the imports as they are for
``docs/explanation/architecture.md``, between the ``GENERATED`` markers.
``python -m tests.common.architecture`` rewrites that part of the page;
``tests/quality/test_architecture_doc.py`` fails when it is out of date.
"""
from __future__ import annotations

import sys

from tests.common.imports import ROOT, edges_between, unit_graph

# bottom first; each line one layer, what its units are for
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "_lazy", "_signals", "_browser", "_proc", "setting_checks", "mutation_reach", "_control_token",
     "_safe_files", "_submit_runner"),  # leaves
    ("_private_dir", "_wait", "config", "paidapi", "proxy", "_artifacts_root"),  # settings; the fake paid API and fault proxy
    ("_channel_dir", "_ports", "history", "limits", "mutation"),  # the event log and its vocabulary
    ("failpoints", "budgets", "querystats", "mutation_baseline", "interference"),  # failpoints in app code; static evidence
    ("instrument",),  # loaded into every app process
    ("evidence", "appclient", "scaffold", "streams"),  # the app's evidence, read into the history; init
    ("checks", "stack", "work"),  # the invariants; the services
    ("faults", "leaks", "markers", "pending", "report"),  # acting on the stack; settling; reports
    ("run", "isolation"),  # one scenario's handle (the jq fixture); keeping tests apart
    ("verdict", "nightly", "session_artifacts", "start_failure",
     "mutation_session"),  # judging runs; where a session writes, why it stopped; a session of several mutants
    ("mutation_plan",),  # mutants packed into shared sessions
    ("mutation_full",),  # every scenario against every mutant
    ("session", "cli"),  # entry points
    ("pytest_plugin",),
)
LAYER_OF = {unit: index for index, layer in enumerate(LAYERS) for unit in layer}

PAGE = ROOT / "docs" / "explanation" / "architecture.md"
BEGIN = "<!-- GENERATED from the imports by tests/common/architecture.py: do not edit by hand -->"
END = "<!-- END GENERATED -->"


def reduced(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """``graph`` (acyclic) without the edges another path already implies: the arrows worth drawing."""
    def reachable(start: str, skip: str) -> set[str]:
        seen, todo = set(), [t for t in graph.get(start, ()) if t != skip]
        while todo:
            node = todo.pop()
            if node not in seen:
                seen.add(node)
                todo.extend(graph.get(node, ()))
        return seen
    return {source: {t for t in targets if t not in reachable(source, t)} for source, targets in graph.items()}


def _node(unit: str) -> str:
    return "u_" + unit.replace(".", "_")  # a Mermaid id: no dots


def mermaid(graph: dict[str, set[str]]) -> list[str]:
    """A Mermaid flowchart: one box per layer, top layer first, arrows of the reduced import graph."""
    lines = ["```mermaid", "flowchart TB"]
    for index in reversed(range(len(LAYERS))):
        lines.append(f"  subgraph L{index}[\"layer {index}\"]")
        lines += [f"    {_node(unit)}[\"{unit}\"]" for unit in sorted(LAYERS[index])]
        lines.append("  end")
    lines += [f"  {_node(source)} --> {_node(target)}" for source, target in edges_between(reduced(graph))]
    return lines + ["```"]


def table(graph: dict[str, set[str]]) -> list[str]:
    """Each unit and every unit it imports directly, top layer first."""
    lines = ["| layer | unit | imports |", "|---|---|---|"]
    for index in reversed(range(len(LAYERS))):
        for unit in sorted(LAYERS[index]):
            imports = ", ".join(f"`{t}`" for t in sorted(graph.get(unit, ()), key=lambda t: (-LAYER_OF[t], t)))
            lines.append(f"| {index} | `{unit}` | {imports or '(nothing of harness)'} |")
    return lines


def render() -> str:
    """The generated part of the page, markers included."""
    graph = unit_graph()
    return "\n".join([BEGIN, "", *mermaid(graph), "", *table(graph), "", END])


def rewritten(text: str) -> str:
    """``text`` (the page) with its generated part drawn again."""
    before, _, rest = text.partition(BEGIN)
    _, found, after = rest.partition(END)
    if not found:
        raise ValueError(f"{PAGE} lacks the markers {BEGIN!r} ... {END!r}")
    return before + render() + after


if __name__ == "__main__":
    PAGE.write_text(rewritten(PAGE.read_text()))
    sys.exit(0)
