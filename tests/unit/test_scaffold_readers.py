"""``jobquake init``'s readers, one way of configuring an app at a time (sources parsed, never run)."""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from harness.scaffold import render, scan


def _project(tmp_path: Path, **files: str) -> Path:
    for name, text in files.items():
        path = tmp_path / name.replace("__", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


def test_variables_read_through_the_apps_own_helpers_and_the_usual_libraries(tmp_path):
    found = scan(_project(tmp_path, **{"app.py": """
        import os
        from decouple import config
        from environs import Env
        env = Env()

        def _get(name, default=None):
            return os.environ.get(name, default)

        def _f(key, default):  # a helper of a helper
            return float(_get(key, default))

        TIMEOUT = _f("APP_TIMEOUT_S", 60)
        URL = _get("APP_DATABASE_URL")
        RETRIES = config("APP_MAX_RETRIES", default=3, cast=int)
        TTL = env.int("APP_CACHE_TTL", 300)
        KEY = os.environ["APP_OPENAI_API_KEY"]
    """}))
    assert found.env_vars == {"APP_TIMEOUT_S": 60, "APP_DATABASE_URL": None, "APP_MAX_RETRIES": 3,
                              "APP_CACHE_TTL": 300, "APP_OPENAI_API_KEY": None}
    config = render(found).config
    assert 'APP_TIMEOUT_S = "0.6"' in config and 'APP_CACHE_TTL = "3"' in config
    assert 'APP_DATABASE_URL = "{database_url}"' in config and 'APP_OPENAI_API_KEY = "jobquake-fake-key"' in config
    assert "sizes and counts, left as the code has them: APP_MAX_RETRIES" in config


def test_pydantic_settings_v1_config_field_env_and_alias_choices_and_dotenv_files(tmp_path):
    found = scan(_project(tmp_path, **{"settings.py": """
        from pydantic import AliasChoices, BaseSettings, Field

        class Base(BaseSettings):
            class Config:
                env_prefix = "SVC_"
                env_file = "local.env"

        class Settings(Base):
            broker: str = Field("redis://localhost:6379/1", env="CELERY_BROKER_URL")
            db: str = Field(validation_alias=AliasChoices("DB_URL", "DATABASE_URL"))
            poll_interval: int = 30
            request_timeout_ms: int = 20000
    """, "local.env": "SVC_POLL_INTERVAL=45\n", ".env.example": "DB_URL=postgresql+asyncpg://u:p@db/x\nEXTRA=1\n"}))
    assert found.env_vars["CELERY_BROKER_URL"] == "redis://localhost:6379/1"
    assert {"DB_URL", "DATABASE_URL"} <= set(found.env_vars)
    assert found.env_vars["SVC_POLL_INTERVAL"] == 45  # the settings' own env_file wins over the code
    assert found.env_vars["DB_URL"] == "postgresql+asyncpg://u:p@db/x" and found.env_vars["EXTRA"] == 1
    config = render(found).config
    assert 'DB_URL = "postgresql+asyncpg://{database_address}"' in config  # the driver the app uses
    assert 'SVC_POLL_INTERVAL = "1"' in config  # 0.45 s, rounded up: the field is an int
    assert 'SVC_REQUEST_TIMEOUT_MS = "2000"' in config  # in milliseconds; a request's deadline at least 2 s


def test_celery_settings_schedules_and_retries_as_the_code_writes_them(tmp_path):
    found = scan(_project(tmp_path, **{"proj__celery.py": """
        from celery import Celery
        from celery.schedules import crontab
        from datetime import timedelta

        app = Celery("proj")
        app.config_from_object("proj.celeryconfig")
        app.conf.update({"task_soft_time_limit": 300, "broker_transport_options": {"visibility_timeout": 7200}})
        app.conf.beat_schedule = {"nightly": {"task": "t", "schedule": crontab(minute="*/5")},
                                  "often": {"task": "t", "schedule": timedelta(minutes=2)}}

        @app.on_after_configure.connect
        def setup(sender, **kwargs):
            sender.add_periodic_task(30.0, ping.s(), name="ping every 30")

        @app.task(autoretry_for=(IOError,), retry_backoff=True, time_limit=600)
        def ping(job_id):
            pass
    """, "proj__celeryconfig.py": "task_acks_late = True\nworker_prefetch_multiplier = 1\n"}))
    assert found.celery_conf["task_acks_late"] is True and found.celery_conf["task_soft_time_limit"] == 300
    assert found.beat_entries == {"nightly": 300.0, "often": 120.0, "ping every 30": 30.0}
    assert found.retries and "beat" in found.commands
    config = render(found).config
    assert "broker_transport_options = { visibility_timeout = 7200, unacked_restore_interval = 100" in config
    assert "task_soft_time_limit = 300" in config and 'tasks = { "proj.celery.ping" = { time_limit = 600 } }' in config
    assert "scale_retry_delays = true" in config
    assert "settle_timeout = 95" in config  # 72 s visibility + a restore sweep (10 s at most) + 10 s, in steps of 5


def test_web_apps_and_mains_with_a_port_option_become_processes(tmp_path):
    found = scan(_project(tmp_path, **{"web.py": """
        from flask import Flask
        app = Flask(__name__)

        @app.route("/healthz")
        def health():
            return "ok"
    """, "feeder.py": """
        import argparse

        def main():
            parser = argparse.ArgumentParser()
            parser.add_argument("--port", type=int)
            print("feeder ready")

        if __name__ == "__main__":
            main()
    """}))
    assert found.commands["api"].command == "flask --app web:app run --host 127.0.0.1 --port {port}"
    assert found.commands["api"].ready == "http:/healthz"
    assert found.commands["feeder"].command == "python -m feeder --port {port}"
    assert found.commands["feeder"].ready == "log:feeder ready" and "feeder" not in found.processes


HANDLER_ONLY = """
    import uuid
    from fastapi import FastAPI, Request
    from sqlalchemy import String
    from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

    app = FastAPI()

    class Base(DeclarativeBase):
        pass

    class Export(Base):
        __tablename__ = "exports"
        id: Mapped[str] = mapped_column(String, primary_key=True)
        status: Mapped[str] = mapped_column(String)
        last_ping: Mapped[str] = mapped_column(String)
        updated_at: Mapped[str] = mapped_column(String)

    def send_heartbeat(session, export):
        export.last_ping = "now"

    @app.post("/exports")
    async def create(request: Request):
        export = Export(id=str(uuid.uuid4()), status="queued")
        return {"id": export.id}
"""


def test_a_job_written_only_by_a_handler_that_needs_a_request_gets_an_adapter_with_todos(tmp_path):
    scaffold = render(scan(_project(tmp_path, **{"api.py": HANDLER_ONLY})))
    adapter = scaffold.files["scenarios/submit_adapter.py"]
    assert "api.create" in adapter and "TODO(jobquake init)" in adapter
    assert 'SUBMIT = "scenarios.submit_adapter:submit"' in scaffold.files["scenarios/conftest.py"]
    assert any("submit_adapter.py submit()" in todo for todo in scaffold.todos)
    ast.parse(adapter)


def test_the_heartbeat_column_is_the_one_a_heartbeat_function_writes_not_updated_at(tmp_path):
    config = render(scan(_project(tmp_path, **{"api.py": HANDLER_ONLY}))).config
    assert 'job_heartbeat_column = "last_ping"' in config and 'job_updated_column = "updated_at"' in config


def test_a_broker_and_database_given_as_separate_settings_get_the_stacks_parts(tmp_path):
    found = scan(_project(tmp_path, **{"settings.py": """
        from pydantic_settings import BaseSettings

        class Settings(BaseSettings):
            REDIS_HOST: str = "localhost"
            REDIS_PORT: int = 6379
            REDIS_PASSWORD: str = ""
            REDIS_DB: int = 2
            POSTGRES_HOST: str = "db"
            POSTGRES_DB: str = "app"
            MONGO_DB_URL: str = "mongodb://localhost:27017"
            APP_PORT: int = 8080
    """}))
    config = render(found).config
    for line in ('REDIS_HOST = "{redis_host}"', 'REDIS_PORT = "{redis_port}"', 'REDIS_PASSWORD = "{redis_password}"',
                 'REDIS_DB = "0"', 'POSTGRES_HOST = "{database_host}"', 'POSTGRES_DB = "{database_name}"'):
        assert line in config
    assert "databases jobquake does not run (it runs PostgreSQL), left as they are: MONGO_DB_URL" in config
    assert "APP_PORT =" not in config


def test_a_required_setting_no_reader_can_fill_is_a_todo_and_failed_variants_are_final(tmp_path):
    found = scan(_project(tmp_path, **{"app.py": """
        import enum
        from pydantic import Field
        from pydantic_settings import BaseSettings

        class Settings(BaseSettings):
            CALLBACK_HOST: str
            SIGNING_SECRET: str = Field(description="no default")

        class FileStatus(str, enum.Enum):
            UPLOADED = "uploaded"
            CHUNK_FAILED = "chunk_failed"
            SUCCESS = "success"
            FAILED = "failed"
    """, ".env.example": "CALLBACK_HOST=http://localhost:8000\n"}))
    config = render(found).config
    assert ("required by the app's settings, with no default (it does not start without them): "
            "CALLBACK_HOST\n") in config  # an example file's value is not loaded by the app
    assert 'SIGNING_SECRET = "jobquake-throwaway-secret-not-for-production"' in config  # a secret: any value works
    from harness.scaffold.jobs import _final_states

    assert _final_states(found)[0] == ("success", "chunk_failed", "failed")


def test_a_library_read_with_no_default_is_required_and_an_example_files_value_is_no_default(tmp_path):
    found = scan(_project(tmp_path, **{".env.example": "APP_SIGNING_TOKEN=changeme\nAPP_CACHE_TTL=5\n", "app.py": """
        import os
        from environs import Env
        env = Env()

        TOKEN = env.str("APP_SIGNING_TOKEN")  # raises when unset
        TTL = env.int("APP_CACHE_TTL", 300)
        HOST = os.getenv("APP_CACHE_HOST")  # None when unset
    """}))
    required = {name for name, detail in found.env_details.items() if detail.required}
    assert required == {"APP_SIGNING_TOKEN"}
    assert "required by the app's settings, with no default (it does not start without them): APP_SIGNING_TOKEN" \
        in render(found).config
