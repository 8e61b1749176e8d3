"""Each mutant flips its defence where the defence lives, and nowhere else; all are documented."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from refapp import budgets, celery_app, documents, model_client, settings, sqs_queues, submit, worker
from refapp.mutants import MUTANTS, UnknownMutant, mutant, parse

README = Path(__file__).resolve().parents[2] / "refapp" / "README.md"


@pytest.fixture
def switch(monkeypatch: pytest.MonkeyPatch):
    """Turn mutants on for this process (settings are re-read)."""
    def on(*names: str, **env: str) -> settings.Settings:
        monkeypatch.setenv("REFAPP_MUTANT", ",".join(names))
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        settings.get.cache_clear()
        return settings.get()
    yield on
    settings.get.cache_clear()


def test_unknown_names_are_refused_with_the_known_ones_listed() -> None:
    with pytest.raises(UnknownMutant, match="no-such-bug.*known mutants: swallow-soft-limit"):
        parse("acks-early, no-such-bug")
    with pytest.raises(KeyError):
        mutant("not-a-mutant")


def test_every_mutant_is_listed_and_documented_with_its_scenario() -> None:
    listed = subprocess.run([sys.executable, "-m", "refapp.mutants"], capture_output=True, text=True, check=True)
    text = README.read_text()
    for name in MUTANTS:
        assert name in listed.stdout
        assert f"`{name}`" in text, f"{name} is not documented in {README}"


def test_unstable_job_id(switch) -> None:
    assert submit.job_id_for("p", "f") == submit.job_id_for("p", "f")
    switch("unstable-job-id")
    assert submit.job_id_for("p", "f") != submit.job_id_for("p", "f")


def test_fresh_idempotency_key(switch) -> None:
    assert documents.idempotency_key("j", "s", 1) == documents.idempotency_key("j", "s", 2)
    switch("fresh-idempotency-key")
    assert documents.idempotency_key("j", "s", 1) != documents.idempotency_key("j", "s", 2)


def test_dlq_before_code_limit(switch) -> None:
    config = switch()
    assert sqs_queues.max_receives() == config.max_attempts + 2
    config = switch("dlq-before-code-limit")
    assert sqs_queues.max_receives() == config.max_attempts


def test_cli_budget_wins(switch) -> None:
    config = switch()
    assert "--soft-time-limit" not in worker.worker_argv(config, [])
    assert budgets.task_limits("refapp.process_job") == {"soft_time_limit": budgets.scaled("task:default"),
                                                         "time_limit": budgets.scaled_hard("task:default")}
    config = switch("cli-budget-wins")
    assert "--soft-time-limit" in worker.worker_argv(config, [])
    assert budgets.task_limits("refapp.process_job") == {}
    assert budgets.task_limits("refapp.sweep_overdue")  # tasks with their own row keep it


def test_dead_config_deadline(switch) -> None:
    config = switch(REFAPP_MODEL_DEADLINE_S="10")
    assert model_client.model_deadline() == pytest.approx(10 * config.time_scale)
    switch("dead-config-deadline", REFAPP_MODEL_DEADLINE_S="10")
    assert model_client.model_deadline() == budgets.scaled("model_call")


def test_acks_early(switch) -> None:
    config = switch()
    assert celery_app.create_app(config).conf.task_acks_late is True
    config = switch("acks-early")
    assert celery_app.create_app(config).conf.task_acks_late is False


def test_job_id_ignores_project(switch) -> None:
    assert submit.job_id_for("p", "f") != submit.job_id_for("q", "f")
    switch("job-id-ignores-project")
    assert submit.job_id_for("p", "f") == submit.job_id_for("q", "f")


def test_idempotency_key_without_job(switch) -> None:
    assert documents.idempotency_key("j", "s", 1) != documents.idempotency_key("k", "s", 1)
    switch("idempotency-key-without-job")
    assert documents.idempotency_key("j", "s", 1) == documents.idempotency_key("k", "s", 1)


def test_limit_layering_mutants_change_one_row_each(switch) -> None:
    switch()
    assert budgets.scaled("model_call", 1) < budgets.scaled("task:default", 1)
    assert budgets.scaled("broker_visibility", 1) > budgets.scaled_hard("task:default", 1)
    switch("model-deadline-over-batch-budget", "broker-visibility-below-hard-limit")
    assert budgets.scaled("model_call", 1) > budgets.scaled("task:default", 1)
    assert budgets.scaled("broker_visibility", 1) < budgets.scaled_hard("task:default", 1)
    assert budgets.BUDGETS["model_call"].seconds == 120  # the table itself is unchanged


def test_every_mutant_is_declared_caught_by_some_scenario_and_invariant(tmp_path: Path) -> None:
    """`jobquake mutants --declared` (CI's gate) runs only what scenarios declare: an undeclared mutant
    would never be run there, and `jobquake mutants` would count it survived."""
    root = README.parents[1]
    listing = tmp_path / "catches.json"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "scenarios",
                           f"--jobquake-list-catches={listing}"], cwd=root, capture_output=True, text=True)
    assert listing.exists(), proc.stdout[-2000:] + proc.stderr[-2000:]
    import json

    marks = [mark for marks in json.loads(listing.read_text()).values() for mark in marks]
    assert sorted(set(MUTANTS) - {name for name, _ in marks}) == []
    assert sorted({name for name, invariant in marks if not invariant}) == []  # each by a named invariant
