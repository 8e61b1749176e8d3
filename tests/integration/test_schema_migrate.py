"""Schema by the app's own migrations: ``manage.py migrate`` in the template database, with the app's settings."""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from harness.config import resolve
from harness.errors import ConfigError
from harness.evidence import prepare_template
from harness.stack.database_values import database_values
from harness.stack.schema import schema_builder
from tests.common.postgres import postgres_service

pytestmark = pytest.mark.integration

REVIEWDESK = Path(__file__).resolve().parents[1] / "reviewdesk"
VALUES = {"redis_url": "redis://127.0.0.1:1/0", "paidapi_url": "http://127.0.0.1:1", "time_scale": 0.01}


@pytest.fixture(scope="module")
def postgres(tmp_path_factory):
    with postgres_service(tmp_path_factory.mktemp("pg")) as service:
        yield service


def _config(**overrides):
    return dataclasses.replace(resolve(pyproject=REVIEWDESK / "pyproject.toml", environ={}), **overrides)


def _migrate(config, url: str) -> None:
    """What the stack does once per session: the schema as config says, then the job table checked."""
    def env_for(at: str) -> dict[str, str]:
        values = {**VALUES, **database_values(at)}
        return {**os.environ, **{var: str(t).format_map(values) for var, t in config.env.items()}}

    schema_builder(config.schema, config.root, env_for)(url)
    prepare_template(config, database_values(url)["database_dsn"])


def _fresh_template(postgres, name: str) -> str:
    with postgres.connect() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return postgres.url_for(name)


def test_migrate_builds_the_django_tables_in_the_template_and_the_state_log_on_the_job_table(postgres):
    url = _fresh_template(postgres, "t_migrated")
    _migrate(_config(), url)
    with postgres.connect("t_migrated") as conn:
        tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
        triggers = {r[0] for r in conn.execute(
            "SELECT tgname FROM pg_trigger WHERE tgrelid = 'contracts_contractreview'::regclass")}
    assert {"contracts_contractreview", "contracts_reviewstep", "django_migrations", "jobquake_state_log"} <= tables
    assert any(name.startswith("jobquake_state_log") for name in triggers)


def test_a_failing_migration_command_names_itself_and_shows_its_output(postgres):
    url = _fresh_template(postgres, "t_failing")
    config = _config(schema="python manage.py migrate --noinput --database nowhere")
    with pytest.raises(ConfigError, match=r"(?s)schema = .*failed \(exit 2\) .*nowhere") as caught:
        _migrate(config, url)
    assert caught.value.key == "schema"


def test_a_job_table_the_migrations_do_not_make_is_named_with_the_tables_they_do(postgres):
    url = _fresh_template(postgres, "t_wrong_table")
    with pytest.raises(ConfigError, match=r"job_table = 'invoices_invoice'.*contracts_contractreview"):
        _migrate(_config(job_table="invoices_invoice"), url)
