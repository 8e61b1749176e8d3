"""The third app (tests/recapapp), attached by `jobquake init` and its TODOs alone.

Its configuration is read the other ways: pydantic-settings with a prefix,
an alias, a nested delimiter and a .env file; a provider host hard-coded
in the code; Alembic migrations; a FastAPI handler over a service function
that writes the job row through an ORM session; Celery beat as the sweeper;
kombu's defaults. What init writes for it, with its TODOs filled in, is
what is committed: nothing else was edited.
"""
from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.scaffold import render, scan
from harness.scaffold.templates import FILES
from tests.common.scaffold import edits_beyond_todo_fills

APP = Path(__file__).resolve().parents[1] / "recapapp"
OURS = {"harness", "refapp", "scenarios", "jobquake", "tests", "tickets"}


def _fresh(tmp_path: Path) -> Path:
    """The third app as it is before `jobquake init`: its code, migrations, .env and requirements only."""
    root = tmp_path / "recapapp"
    shutil.copytree(APP, root, ignore=shutil.ignore_patterns("__pycache__", "scenarios", "pyproject.toml",
                                                             ".jobquake"))
    return root


def test_the_committed_config_and_scenarios_are_inits_output_with_its_todos_filled_in_only(tmp_path):
    root = _fresh(tmp_path)
    assert main(["init", str(root)]) == 0
    for rel in ["pyproject.toml", *(f"scenarios/{name}" for name in FILES)]:
        written = (root / rel).read_text().splitlines()
        committed = (APP / rel).read_text().splitlines()
        assert edits_beyond_todo_fills(written, committed) == [], rel
    assert sorted(p.name for p in (APP / "scenarios").glob("*.py")) == sorted(FILES)


def test_the_diff_check_sees_an_edit_that_fills_no_todo():
    written = ["# TODO(jobquake init): x", "X = {}", "", "SLACK = 0.5"]
    assert edits_beyond_todo_fills(written, ["# TODO(jobquake init): x", "X = {1: 2}", "", "SLACK = 0.5"]) == []
    assert edits_beyond_todo_fills(written, ["# TODO(jobquake init): x", "X = {}", "", "SLACK = 0.9"]) == \
        ["SLACK = 0.9"]
    assert edits_beyond_todo_fills(written, [*written, "@pytest.mark.catches('bug')"]) == \
        ["@pytest.mark.catches('bug')"]


def test_init_reads_its_settings_class_env_file_alias_and_nested_fields(tmp_path):
    found = scan(_fresh(tmp_path))
    env = found.env_vars
    assert env["DATABASE_URL"].startswith("postgresql+psycopg://")  # alias="DATABASE_URL": no prefix
    assert env["RECAPS_REDIS_URL"] == "redis://localhost:6379/0"  # env_prefix
    assert env["RECAPS_LLM__ACTIONS_TIMEOUT_S"] == 120  # nested, through "__"; the .env file's value
    assert env["RECAPS_STALE_AFTER_S"] == 900 and env["OPENAI_API_KEY"] == ""
    assert found.env_details["RECAPS_DB_POOL_TIMEOUT_S"].annotation == "float"
    assert len(env) == 13  # every variable the app reads (its settings, its bug switch)


def test_init_finds_its_timings_processes_schema_and_submit(tmp_path):
    found = scan(_fresh(tmp_path))
    assert found.schema_command == "alembic upgrade head"
    assert found.paid_timeouts == {45.0} and found.provider_urls == {"https://openrouter.ai/api/v1/chat/completions"}
    assert found.beat_entries == {"sweep-stale-recaps": 60.0}
    assert set(found.commands) == {"api", "beat"}
    assert found.commands["api"].ready == "http:/health"
    scaffold = render(found)
    config = scaffold.config
    assert 'job_heartbeat_column = ""' in config and 'job_updated_column = "updated_at"' in config
    assert 'terminal_states = ["completed", "failed"]' in config
    assert 'RECAPS_LLM__ACTIONS_TIMEOUT_S = "2"' in config and 'OPENAI_BASE_URL = "{paidapi_url}/v1"' in config
    assert 'tasks = { "recaps.summarise" = { soft_time_limit = 240, time_limit = 300 } }' in config
    assert "unacked_restore_interval = 100" in config and "settle_timeout = 60" in config
    conftest = scaffold.files["scenarios/conftest.py"]
    assert 'SUBMIT = "recaps.service:submit_recap"' in conftest and 'SESSION = "recaps.db:SessionLocal"' in conftest
    for text in scaffold.files.values():
        ast.parse(text)


def test_the_third_app_imports_nothing_from_jobquake_or_the_other_apps():
    files = sorted((APP / "recaps").rglob("*.py")) + sorted((APP / "migrations").rglob("*.py"))
    assert len(files) >= 10
    for path in files:
        tree = ast.parse(path.read_text(), filename=str(path))
        names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
                  and n.level == 0}
        assert not names & OURS, f"{path} imports {names & OURS}"
        assert "jobquake" not in path.read_text().lower(), path


@pytest.mark.parametrize("extra", ["ollama", "anthropic"])
def test_a_provider_client_import_gets_the_variables_that_client_reads(tmp_path, extra):
    (tmp_path / "app.py").write_text(f"import {extra}\n")
    config = render(scan(tmp_path)).config
    name = {"ollama": "OLLAMA_HOST", "anthropic": "ANTHROPIC_BASE_URL"}[extra]
    assert f'{name} = "{{paidapi_url}}"' in config


def test_jobquake_config_shows_what_init_wrote_for_it(monkeypatch, capsys):
    monkeypatch.chdir(APP)
    assert main(["config"]) == 0
    out = capsys.readouterr().out
    assert "scale_paid_call_timeouts  45 " in out and "schema                    alembic upgrade head" in out
    assert "'tasks': {'recaps.summarise': {'soft_time_limit': 240, 'time_limit': 300}}" in out
