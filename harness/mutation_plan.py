"""Which mutants of a matrix share a pytest session, and what each mutant's share of it says.

Used by ``jobquake mutants`` (each mutant's declared scenarios) and by
``--full`` (each mutant's reached scenarios), after a baseline that
recorded reach.

Every session pays a fixed cost before its first scenario (pytest and the
harness imported, the stack's servers and the zygote started, the app's
processes forked) and again to stop; for a mutant that reaches a few
scenarios that cost is most of its run. ``pack`` therefore puts every mutant
that may share a session into one of at most ``slots`` shared sessions
(``harness.mutation_session`` runs them one group after another), balanced
by the baseline's seconds for their scenarios, and gives a session of its
own to each mutant that may not: one whose switch app code in the pytest
process itself reads (see ``mutation_session``), or any mutant when the
baseline could not tell (no reach recorded, the docker backend, a zygote
that preloads the app's own modules).

A mutant may also be cut into parts (``split_into_parts``): its scenarios
in a few runs of about equal baseline seconds, each packed as if it were a
mutant of its own, and the parts' outcomes joined again. Whole-suite
sessions (a mutant whose switch the pytest process reads reaches every
scenario) are then short enough that the last ones started do not run on
alone: in a full matrix of refapp, the last one, started when a slot came
free at 21 minutes, ran 4 minutes more with the machine 10 % busy.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from harness.mutation import MutationMatrix, Outcome, joined
from harness.mutation_baseline import run_baseline, spans
from harness.mutation_reach import asked_by_the_session
from harness.mutation_session import FirstCatch, Plan, read_outcomes

# seconds of a session's start and stop, and of restarting the app's processes for the next group, in
# the baseline's terms: they only weigh the packing (a first shared group is worth a session of its own)
SESSION_S = 10.0
SWITCH_S = 2.0
PLUGIN = "harness.mutation_session"
PART = "#"  # a part's key: ``<mutant>#<k>``, k from 1 (a mutant in one part keeps its name)


def mutant_of(key: str) -> str:
    """The mutant a key of ``split_into_parts`` stands for."""
    return key.split(PART, 1)[0]


def split_into_parts(selected: dict[str, list[str]], took: dict[str, float],
                     limit: float) -> dict[str, list[str]]:
    """Each mutant's scenarios in as few parts as keep each under about ``limit`` of the baseline's seconds
    (``took``; a scenario not there counts 0), in their order, the parts about equal; never an empty part.

    A mutant in one part keeps its own name; one in more gets ``<mutant>#1``, ``<mutant>#2``...
    """
    parts: dict[str, list[str]] = {}
    for name, nodeids in selected.items():
        total = sum(took.get(n, 0.0) for n in nodeids)
        count = min(len(nodeids), max(1, math.ceil(total / limit))) if limit > 0 else 1
        if count <= 1:
            parts[name] = list(nodeids)
            continue
        runs: list[list[str]] = [[]]
        done, share = 0.0, total / count
        for nodeid in nodeids:
            # a new part once this one holds its share, as long as a part is left for the rest
            if runs[-1] and done >= share * len(runs) and len(runs) < count:
                runs.append([])
            runs[-1].append(nodeid)
            done += took.get(nodeid, 0.0)
        parts.update({f"{name}{PART}{k}": run for k, run in enumerate(runs, 1)})
    return parts


@dataclass
class Session:
    """One pytest session of the matrix: one mutant (a session of its own) or several in turn."""

    mutants: list[str] = field(default_factory=list)
    shared: bool = False
    seconds: float = 0.0  # the baseline's seconds for its scenarios, plus start and switches


def pack(selected: dict[str, list[str]], cost: Callable[[str], float], sharing: Iterable[str],
         slots: int) -> list[Session]:
    """Sessions for every mutant with scenarios to run, the longest first.

    Longest processing time first over ``slots`` bins: each mutant, the
    costliest first, goes to the bin that would end first, into that bin's
    shared session when it may share, else into a session of its own.
    """
    may_share = set(sharing)
    bins: list[list[Session]] = [[] for _ in range(max(1, slots))]
    for name in sorted((m for m, nodeids in selected.items() if nodeids), key=lambda m: (-cost(m), m)):
        target = min(bins, key=lambda sessions: (sum(s.seconds for s in sessions), len(sessions)))
        session = next((s for s in target if s.shared), None) if name in may_share else None
        if session is None:
            session = Session(shared=name in may_share, seconds=SESSION_S)
            target.append(session)
        session.mutants.append(name)
        session.seconds += cost(name) + (SWITCH_S if len(session.mutants) > 1 else 0.0)
    sessions = [s for sessions in bins for s in sessions]
    return sorted(sessions, key=lambda s: -s.seconds)


def run_packed(matrix: MutationMatrix, selected: dict[str, list[str]], may_share: set[str],
               cost: Callable[[str], float], first_catch: FirstCatch | None = None) -> dict[str, Outcome]:
    """Each mutant's outcome over its ``selected`` scenarios, in the sessions ``pack`` makes (``matrix.jobs``
    at once, the costliest first); a mutant with no scenario to run needs no session: the baseline's result.
    With ``first_catch``, each mutant's scenarios run in ``selected``'s order and stop at its first catch.
    Keys of ``selected`` may be parts (``split_into_parts``): each is packed as a mutant of its own
    (``may_share`` and ``cost`` name parts), and the outcome of each mutant joins its parts'."""
    sessions = pack(selected, cost, may_share, matrix.jobs)
    save_sessions(matrix.work / "sessions.json", sessions)
    found: dict[str, list[Outcome]] = {mutant_of(key): [Outcome(mutant_of(key), [], 0)]
                                       for key, nodeids in selected.items() if not nodeids}
    labels = [f"shared-{i + 1}" for i in range(len(sessions))]
    for outcomes in matrix.in_parallel(lambda i: run_session(matrix, sessions[i], selected, labels[i], first_catch),
                                       range(len(sessions))):
        for mutant, outcome in outcomes.items():
            found.setdefault(mutant, []).append(outcome)
    return {mutant: joined(parts) for mutant, parts in found.items()}


def run_shared(matrix: MutationMatrix, declared: dict[str, list[str]],
               scenarios: list[str]) -> tuple[Outcome, dict[str, Outcome]]:
    """``MutationMatrix.run``'s runner with shared sessions: the baseline first, in shards recording reach
    (what it records decides who may share), then ``run_packed``; on another backend, ``run_each``."""
    if matrix.config.backend != "process":  # containers record no reach
        return matrix.run_each(declared, scenarios)
    baseline, reach = run_baseline(matrix, scenarios)
    took = spans(reach)
    return baseline, run_packed(matrix, declared, shareable(matrix, reach),
                                lambda name: sum(took.get(n, 0.0) for n in declared[name]))


def shareable(matrix: MutationMatrix, reach: list[Path]) -> set[str]:
    """The mutants that may share a session: none where the baseline cannot tell (see the module docstring)."""
    asked = asked_by_the_session(reach)
    if asked is None or app_modules_preloaded(matrix.config.app_preload, matrix.config.root):
        return set()
    return set(matrix.mutants) - asked


def app_modules_preloaded(preload: Iterable[str], root: Path) -> list[str]:
    """The modules the zygote preloads that are the app's own (a package or module in its folder)."""
    mine = []
    for name in preload:
        top = name.split(".", 1)[0]
        if any((base / top).is_dir() or (base / f"{top}.py").is_file() for base in (root, root / "src")):
            mine.append(name)
    return mine


def run_session(matrix: MutationMatrix, session: Session, selected: dict[str, list[str]],
                label: str, first_catch: FirstCatch | None = None) -> dict[str, Outcome]:
    """Run ``session`` and return each of its mutants' outcome over its own scenarios (a session of one
    mutant runs as a plan too when it is to stop at its first catch). ``session.mutants`` may name parts
    (``split_into_parts``): the outcomes are by mutant, two parts of one in a session run as one group."""
    if first_catch is None and (not session.shared or len(session.mutants) == 1):
        key = session.mutants[0]
        name = mutant_of(key)
        label = key.replace(PART, "-part-") if key != name else None  # a whole mutant's folder is its name
        return {name: matrix.run_one(name, selected[key], label=label)}
    folder = matrix.work / label
    folder.mkdir(parents=True, exist_ok=True)
    groups: dict[str, list[str]] = {}
    for key in session.mutants:
        groups.setdefault(mutant_of(key), []).extend(selected[key])
    plan = Plan(matrix.config.mutant_env, list(groups.items()), folder / "plan.json", first_catch)
    plan.write()
    plan.outcomes_path.unlink(missing_ok=True)
    functions = sorted({nodeid.split("[", 1)[0] for _, nodeid in plan.pairs()})  # the plugin picks the params
    whole = matrix.run_one(plan.groups[0][0], functions, label=label,
                           args=["-p", PLUGIN, f"--jobquake-mutant-plan={plan.path}"])
    return split(whole, plan)


def split(whole: Outcome, plan: Plan) -> dict[str, Outcome]:
    """One session's outcome as each mutant's: its scenarios' verdicts, failures and seconds.

    A planned pair with no outcome did not run (the session ended early): it
    counts as failed, as an error would, and never as a pass.
    """
    rows = {(row["mutant"], row["nodeid"]): row for row in read_outcomes(plan)}
    test_of = {pair: row["test"] for pair, row in rows.items()}
    found: dict[str, Outcome] = {}
    for mutant, nodeids in plan.groups:
        outcome = Outcome(mutant, list(nodeids), 0)
        for nodeid in nodeids:
            row = rows.get((mutant, nodeid))
            if row is not None and row["outcome"] == "not run":
                outcome.not_run.append(nodeid)
                continue
            if row is None or row["outcome"] == "failed":
                outcome.failed.append(nodeid)
            if row is not None:
                outcome.seconds += row.get("seconds", 0.0)
                invalid = whole.violated.get(test_of[(mutant, nodeid)])
                if invalid is not None:
                    outcome.violated[nodeid] = invalid
        outcome.failed.sort()
        outcome.exit_code = whole.exit_code if whole.exit_code > 1 else int(bool(outcome.failed))
        found[mutant] = outcome
    return found


def save_sessions(path: Path, sessions: list[Session]) -> None:
    """How the mutants were packed, for whoever reads the run's folder."""
    path.write_text(json.dumps([{"mutants": s.mutants, "shared": s.shared, "baseline_seconds": round(s.seconds, 1)}
                                for s in sessions], indent=1))
