"""Schema by the app's own migrations: ``manage.py migrate`` once, in the template database, then checked."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness._ports import free_port, release_port
from harness.config import resolve
from harness.errors import ConfigError
from harness.stack.postgres import PostgresService
from harness.stack.schema_command import schema_by_command

pytestmark = pytest.mark.integration

REVIEWDESK = Path(__file__).resolve().parents[1] / "reviewdesk"
VALUES = {"redis_url": "redis://127.0.0.1:1/0", "paidapi_url": "http://127.0.0.1:1", "time_scale": 0.01}


@pytest.fixture(scope="module")
def postgres(tmp_path_factory):
    service = PostgresService("postgres", port=free_port(), workdir=tmp_path_factory.mktemp("pg"))
    service.start()
    yield service
    service.stop()
    service.remove_data()
    release_port(service.port)


def _config(**overrides):
    return dataclasses.replace(resolve(pyproject=REVIEWDESK / "pyproject.toml", environ={}), **overrides)


def _fresh_template(postgres, name: str) -> str:
    with postgres.connect() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return postgres.url_for(name)


def test_migrate_builds_the_django_tables_in_the_template_and_the_state_log_on_the_job_table(postgres):
    url = _fresh_template(postgres, "t_migrated")
    schema_by_command(_config(), lambda: VALUES)(url)
    with postgres.connect("t_migrated") as conn:
        tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
        triggers = {r[0] for r in conn.execute(
            "SELECT tgname FROM pg_trigger WHERE tgrelid = 'contracts_contractreview'::regclass")}
    assert {"contracts_contractreview", "contracts_reviewstep", "django_migrations", "jobquake_state_log"} <= tables
    assert any(name.startswith("jobquake_state_log") for name in triggers)


def test_a_failing_migration_command_names_itself_and_shows_its_output(postgres):
    url = _fresh_template(postgres, "t_failing")
    config = _config(schema_command="python manage.py migrate --noinput --database nowhere")
    with pytest.raises(ConfigError, match=r"(?s)schema_command = .*failed with exit 2 .*nowhere") as caught:
        schema_by_command(config, lambda: VALUES)(url)
    assert caught.value.key == "schema_command"


def test_a_job_table_the_migrations_do_not_make_is_named_with_the_tables_they_do(postgres):
    url = _fresh_template(postgres, "t_wrong_table")
    with pytest.raises(ConfigError, match=r"job_table = 'invoices_invoice'.*contracts_contractreview"):
        schema_by_command(_config(job_table="invoices_invoice"), lambda: VALUES)(url)
