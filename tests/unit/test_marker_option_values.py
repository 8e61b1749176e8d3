"""Marker option values are checked against each checker's declared option types, at collection."""
from __future__ import annotations

import pytest

from harness.faults.fault_set import Faults
from harness.markers import jobquake_problems


@pytest.mark.parametrize("options, expected", [
    ({"timeout_labelled": {"deadline": "x"}}, "{'deadline': 'x'}}): expected float | None, got str"),
    ({"timeout_labelled": {"exact": 1}}, "{'exact': 1}}): expected bool, got int"),
    ({"every_job_terminal": {"terminal_states": "done"}}, "expected Optional[Sequence[str]], got str"),
    ({"query_budget": {"budget": {"items": "many"}}}, "expected Union[float, Mapping[str, float]], got dict"),
])
def test_a_value_of_the_wrong_type_is_a_problem_naming_the_expected_type(options, expected):
    checks = [name for name in options if name != "every_job_terminal"]
    problems = jobquake_problems({"checks": checks, "options": options})
    assert len(problems) == 1 and expected in problems[0], problems


@pytest.mark.parametrize("options", [
    {"timeout_labelled": {"deadline": 100, "label": "timeout", "success_states": ["done"], "exact": True}},
    {"timeout_labelled": {"deadline": None}},
    {"query_budget": {"budget": 2}},
    {"query_budget": {"budget": {"items": 1.5}}},
])
def test_values_of_the_declared_types_pass(options):
    assert jobquake_problems({"checks": list(options), "options": options}) == []


def test_an_unknown_fault_lists_the_known_ones():
    with pytest.raises(AttributeError, match="no fault 'kil_worker'; did you mean 'kill_worker'\\? known: "
                                              "broker_outage, database_restart"):
        Faults(None).kil_worker  # noqa: B018 - the attribute access is the test
