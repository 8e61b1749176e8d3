"""The mutation matrix narrowed to a few mutants, with pytest arguments passed to every run."""
from __future__ import annotations

import subprocess
from pathlib import Path

from harness.config import find_pyproject, resolve
from harness.mutation import MutationMatrix, Outcome

ROOT = Path(__file__).resolve().parents[2]


def matrix(extra_args: list[str] | None = None) -> MutationMatrix:
    config = resolve(environ={}, pyproject=find_pyproject(ROOT))
    return MutationMatrix(config, root=ROOT, out=Path("/nonexistent"), extra_args=extra_args)


def test_narrowed_to_some_mutants_scenarios_naming_others_are_not_an_error(monkeypatch):
    m = matrix()
    m.mutants = {"heartbeat-forever": m.mutants["heartbeat-forever"]}
    monkeypatch.setattr(m, "catches", lambda: {
        "s.py::a": [("heartbeat-forever", "every_job_terminal")],
        "s.py::b": [("acks-early", "every_job_terminal")],  # known, not asked for
    })
    ran: list[tuple[str | None, list[str]]] = []

    def run_one(mutant, nodeids, env=None, label=None, args=()):
        ran.append((mutant, nodeids))
        return Outcome(mutant, nodeids, 1, violated={"s.py::a": ["every_job_terminal"]})

    monkeypatch.setattr(m, "run_one", run_one)
    baseline, results = m.run()
    assert [r.name for r in results] == ["heartbeat-forever"] and results[0].caught
    assert sorted(mutant or "" for mutant, _ in ran) == ["", "heartbeat-forever"]


def test_narrowed_the_run_with_no_mutant_is_only_the_scenarios_the_mutants_asked_for_declare(monkeypatch):
    """`--only` asks about a few mutants: their scenarios with no mutant are the false-alarm check,
    not the whole suite again (which every-mutant `jobquake mutants` runs); not narrowed, the whole suite."""
    from harness.mutation_plan import run_shared

    m = matrix()
    catches = {"s.py::a": [("heartbeat-forever", "every_job_terminal")],
               "s.py::b": [("acks-early", "every_job_terminal")],
               "s.py::c": [("heartbeat-forever", "every_job_terminal"), ("acks-early", None)],
               "s.py::d": []}
    monkeypatch.setattr(m, "catches", lambda: catches)
    ran: dict[str | None, list[str]] = {}

    def run_one(mutant, nodeids, env=None, label=None, args=()):
        ran[mutant] = nodeids
        return Outcome(mutant, nodeids, 0)

    monkeypatch.setattr(m, "run_one", run_one)
    m.run()
    assert ran[None] == [m.scenarios]  # every mutant asked for: the whole suite
    m.mutants = {"heartbeat-forever": m.mutants["heartbeat-forever"]}
    for runner in (None, run_shared):
        ran.clear()
        m.run(runner)
        assert ran[None] == ["s.py::a", "s.py::c"], runner


def test_pytest_arguments_reach_every_run(monkeypatch):
    seen: list[list[str]] = []

    class FakePopen:
        returncode = 0

        def __init__(self, cmd, **kw):
            seen.append(cmd)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def communicate(self):
            return "", ""

    monkeypatch.setattr(subprocess, "Popen", FakePopen)
    matrix(["--jobquake-sqs", "localstack"])._pytest(["scenarios"], env={})
    assert seen[0][-2:] == ["--jobquake-sqs", "localstack"]


def test_results_go_to_the_artifacts_folder_by_default(tmp_path, monkeypatch, capsys):
    """Not into the project's sources (benchmarks/): under config ``artifacts``, or ``--out``."""
    import json

    import harness.mutation
    from harness.cli import main
    from harness.mutation import MutantResult, Outcome

    class FakeMatrix:
        def __init__(self, config, **kwargs):
            self.mutants = {"bug": "a bug"}

        def declares_nothing(self):
            return False

        def narrowed(self):
            return False

        def run(self, runner=None):
            found = Outcome(None, [], 0)
            return found, [MutantResult("bug", "a bug", [("t::x", None)], Outcome("bug", ["t::x"], 1))]

    monkeypatch.setattr(harness.mutation, "MutationMatrix", FakeMatrix)
    (tmp_path / "pyproject.toml").write_text("[tool.jobquake]\nartifacts = 'out/evidence'\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JOBQUAKE_ARTIFACTS", raising=False)
    main(["mutants"])
    written = tmp_path / "out" / "evidence" / "mutants.json"
    assert json.loads(written.read_text())["score"] == {"caught": 0, "total": 1}
    assert f"results: {written}" in capsys.readouterr().out
    main(["mutants", "--out", str(tmp_path / "elsewhere.json")])
    assert (tmp_path / "elsewhere.json").exists()


def test_with_no_catch_declared_mutants_runs_the_full_matrix_and_says_so(tmp_path, monkeypatch, capsys):
    """An app's own scenarios (init's) declare no catch: a bare `0/N caught ... no scenario declares it`
    measures nothing, so the command runs every scenario against every mutant instead; with
    --declared it says in one line that --full is the way."""
    import harness.cli
    import harness.mutation
    from harness.cli import main

    class FakeMatrix:
        def __init__(self, config, **kwargs):
            self.mutants = {"bug": "a bug"}

        def declares_nothing(self):
            return True

        def run(self):
            raise AssertionError("the declared-catches matrix has nothing to run")

    ran = []
    monkeypatch.setattr(harness.mutation, "MutationMatrix", FakeMatrix)
    monkeypatch.setattr(harness.cli, "_mutants_full", lambda args, settings, matrix: ran.append(matrix) or 0)
    (tmp_path / "pyproject.toml").write_text("[tool.jobquake]\n")
    monkeypatch.chdir(tmp_path)
    assert main(["mutants"]) == 0 and len(ran) == 1
    assert "every scenario runs against every mutant" in capsys.readouterr().out
    assert main(["mutants", "--declared"]) == 0 and len(ran) == 1
    assert "`jobquake mutants --full` runs every scenario against every mutant" in capsys.readouterr().out
