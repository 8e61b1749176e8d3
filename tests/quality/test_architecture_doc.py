"""docs/explanation/architecture.md draws the layers and imports as they are (it cannot drift)."""
from __future__ import annotations

from tests.common.architecture import BEGIN, END, PAGE, LAYERS, reduced, rewritten


def test_the_page_shows_the_imports_as_they_are():
    text = PAGE.read_text()
    assert text == rewritten(text), ("docs/explanation/architecture.md is out of date: "
                                     "python -m tests.common.architecture draws it again")


def test_the_page_has_every_layer_and_unit():
    text = PAGE.read_text()
    generated = text[text.index(BEGIN):text.index(END)]
    for index, layer in enumerate(LAYERS):
        assert f'subgraph L{index}["layer {index}"]' in generated
        for unit in layer:
            assert f'["{unit}"]' in generated, unit


def test_reduction_drops_only_implied_arrows():
    graph = {"a": {"b", "c"}, "b": {"c"}, "c": set(), "d": {"c"}}
    assert reduced(graph) == {"a": {"b"}, "b": {"c"}, "c": set(), "d": {"c"}}
