"""Several mutants in one pytest session, one after another: each planned scenario once per mutant.

A session's fixed cost (the pytest process and its imports, the stack's
servers, the zygote) is most of what a mutant with few scenarios costs, and
``jobquake mutants --full`` used to pay it once per mutant. Loaded with
``-p harness.mutation_session --jobquake-mutant-plan=PATH``, a session runs
the groups of a plan (``[{"mutant": name, "nodeids": [...]}, ...]``, and the
variable that switches a mutant on, ``env``) in order. Each planned scenario
becomes one test per mutant that plans it, ``test_x[mutant]`` (or
``test_x[params-mutant]``), and the tests run grouped by mutant.

Where one group ends and the next begins, the variable is set in this
process's environment, which every process the harness starts inherits,
and every app process and worker is killed; the next test's reset starts
them again, so they carry the new mutant from their first line. What this
cannot change is app code that already ran in this pytest process: it read
its settings once. So the matrix plans a mutant into a shared session only
when the baseline's pytest process never asked its switch
(``mutation_reach.asked_by_the_session``), and only when the zygote preloads
no module of the app (it would keep what it read too).

With ``first_catch`` in the plan (the baseline's invalid invariants per
scenario, and the invariants that judge the run rather than the app), a
mutant's scenarios stop at its first catch by an invariant: a scenario with
an invalid invariant the baseline did not have there. Its later scenarios
are skipped before their setup and recorded as ``not run``.

At the end, ``PATH``'s outcomes file (``<plan>.outcomes.json``) holds each
pair's outcome: ``{"mutant", "nodeid" (the scenario's own), "test" (the
test's id here), "outcome", "seconds"}``; a planned pair missing from it did
not run.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pytest

from harness.report.junit import invalid_in

ARG = "jobquake_mutant"
PLAN_KEY = pytest.StashKey["Plan"]()


@dataclass
class FirstCatch:
    """When a scenario catches its mutant by an invariant: one invalid there that the baseline was not."""

    baseline: dict[str, list[str]]  # scenario nodeid -> the invariants invalid there with no mutant
    ignore: list[str]  # invariants that judge the run itself (a fault that did not land...), never a catch

    def caught(self, nodeid: str, invalid: set[str]) -> bool:
        return bool(invalid - set(self.ignore) - set(self.baseline.get(nodeid, [])))


@dataclass
class Plan:
    """The groups of one shared session, in the order they run."""

    env: str
    groups: list[tuple[str, list[str]]]  # (mutant, scenario nodeids)
    path: Path
    first_catch: FirstCatch | None = None  # stop each mutant at its first catch by an invariant
    current: str | None = None  # the mutant the running app processes carry
    outcomes: dict[str, dict[str, Any]] = field(default_factory=dict)  # test id -> its row (see the docstring)

    @classmethod
    def load(cls, path: Path) -> "Plan":
        data = json.loads(Path(path).read_text())
        rule = data.get("first_catch")
        return cls(data["env"], [(g["mutant"], list(g["nodeids"])) for g in data["groups"]], Path(path),
                   FirstCatch(rule["baseline"], rule["ignore"]) if rule is not None else None)

    def write(self) -> None:
        rule = self.first_catch
        self.path.write_text(json.dumps({"env": self.env, "groups": [{"mutant": m, "nodeids": n}
                                                                      for m, n in self.groups],
                                         "first_catch": None if rule is None else
                                         {"baseline": rule.baseline, "ignore": sorted(rule.ignore)}}, indent=1))

    @property
    def outcomes_path(self) -> Path:
        return self.path.with_suffix(".outcomes.json")

    def pairs(self) -> list[tuple[str, str]]:
        return [(mutant, nodeid) for mutant, nodeids in self.groups for nodeid in nodeids]

    def mutants_of(self, function: str) -> list[str]:
        """The mutants that plan any test of the test function ``function`` (its nodeid without params)."""
        return [mutant for mutant, nodeids in self.groups if any(_function(n) == function for n in nodeids)]


def _function(nodeid: str) -> str:
    return nodeid.split("[", 1)[0]


def scenario_of(item: pytest.Item) -> tuple[str, str] | None:
    """(mutant, the scenario's own nodeid) of a test this plugin made, else None."""
    callspec = getattr(item, "callspec", None)
    if callspec is None or ARG not in callspec.params:
        return None
    mutant = callspec.params[ARG]
    alone, last = f"[{mutant}]", f"-{mutant}]"
    if item.nodeid.endswith(alone) and callspec.id == mutant:
        return mutant, item.nodeid[:-len(alone)]
    if item.nodeid.endswith(last):
        return mutant, item.nodeid[:-len(last)] + "]"
    raise pytest.UsageError(f"jobquake: cannot tell the scenario of {item.nodeid} (mutant {mutant!r})")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("jobquake").addoption(
        "--jobquake-mutant-plan", dest="jobquake_mutant_plan", default=None, metavar="PATH",
        help="run the mutant groups of this plan one after another (jobquake mutants --full does)")


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("jobquake_mutant_plan")
    if path:
        plan = config.stash[PLAN_KEY] = Plan.load(Path(path))
        plan.current = plan.groups[0][0]
        os.environ[plan.env] = plan.current  # the stack, whenever it starts, starts with the first group's
        config.pluginmanager.register(PlannedSession(plan), "jobquake-mutant-plan")


class PlannedSession:
    """The hooks of a session that runs a plan."""

    def __init__(self, plan: Plan):
        self.plan = plan
        self.caught: dict[str, str] = {}  # with first_catch: mutant -> the test that caught it

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
        """With ``first_catch``: a caught mutant's later scenarios are skipped before their setup."""
        found = scenario_of(item) if self.plan.first_catch is not None else None
        if found is None:
            return (yield)
        mutant, nodeid = found
        by = self.caught.get(mutant)
        if by is not None:
            item.add_marker(pytest.mark.skip(reason=f"{mutant} is caught already (by {by})"))
        result = yield
        row = self.plan.outcomes.get(item.nodeid)
        if by is not None and row is not None:
            row["outcome"] = "not run"
        elif self.plan.first_catch.caught(nodeid, invalid_in(item.user_properties)):  # the verdict's marks
            self.caught[mutant] = item.nodeid
        return result

    @pytest.hookimpl(trylast=True)  # after the scenario's own parametrize: the mutant is the id's last part
    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        mutants = self.plan.mutants_of(metafunc.definition.nodeid)
        if mutants:
            if ARG not in metafunc.fixturenames:
                metafunc.fixturenames.append(ARG)
            metafunc.parametrize(ARG, mutants, ids=mutants, indirect=True)

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """Only the planned pairs, grouped by mutant in the plan's order."""
        order = {pair: i for i, pair in enumerate(self.plan.pairs())}
        kept = [item for item in items if scenario_of(item) in order]
        config.hook.pytest_deselected(items=[item for item in items if scenario_of(item) not in order])
        items[:] = sorted(kept, key=lambda item: order[scenario_of(item)])
        for item in items:
            mutant, nodeid = scenario_of(item)
            self.plan.outcomes[item.nodeid] = {"mutant": mutant, "nodeid": nodeid, "test": item.nodeid,
                                               "outcome": None, "seconds": 0.0}

    @pytest.hookimpl(wrapper=True, tryfirst=True)  # outermost: after the verdict's text is in the report
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        report = yield
        found = scenario_of(item)
        if found is not None and isinstance(report.longrepr, str):
            # this test id exists only in a planned session: replay the scenario with its mutant on
            mutant, nodeid = found
            report.longrepr = report.longrepr.replace(f"pytest {item.nodeid!r} ",
                                                      f"{self.plan.env}={mutant} pytest {nodeid!r} ")
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        row = self.plan.outcomes.get(report.nodeid)
        if row is None:
            return
        row["seconds"] += report.duration
        if row["outcome"] in (None, "passed") or report.failed:  # a failed phase decides, else the first skip
            row["outcome"] = "failed" if report.failed else "skipped" if report.skipped else "passed"

    def pytest_sessionfinish(self) -> None:
        ran = [row for row in self.plan.outcomes.values() if row["outcome"] is not None]
        self.plan.outcomes_path.write_text(json.dumps(ran, indent=1))


@pytest.fixture
def jobquake_mutant(request: pytest.FixtureRequest) -> str:
    """The mutant this test runs with."""
    return request.param


@pytest.fixture(autouse=True)
def _jobquake_switch_mutant(request: pytest.FixtureRequest) -> None:
    """Before ``jq``'s reset: where a new group begins, the next processes carry its mutant."""
    plan = request.config.stash.get(PLAN_KEY, None)
    found = scenario_of(request.node) if plan else None
    if found is None:
        return
    os.environ[plan.env] = found[0]  # what the test starts itself carries it too
    if found[0] != plan.current and "jq_stack" in request.fixturenames:
        from harness.isolation import stop_holders

        stop_holders(request.getfixturevalue("jq_stack"))  # the reset starts them again, with the new mutant
        plan.current = found[0]


def read_outcomes(plan: Plan) -> Iterator[dict[str, Any]]:
    """The rows an ended session wrote (none if it wrote nothing)."""
    if plan.outcomes_path.exists():
        yield from json.loads(plan.outcomes_path.read_text())
