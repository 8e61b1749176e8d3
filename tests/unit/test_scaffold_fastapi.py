"""``jobquake init`` on a FastAPI + SQLModel + pydantic-settings app with a repository layer (sources parsed, never run)."""
from __future__ import annotations

import textwrap
from pathlib import Path

from harness.scaffold import render, roles, scan

MODELS = """
    from enum import Enum
    from uuid import UUID, uuid4
    from sqlmodel import Field, SQLModel

    class RunState(str, Enum):
        QUEUED = "QUEUED"
        COMPLETED = "COMPLETED"
        FAILED = "FAILED"

    class JobStatus(str, Enum):
        PENDING = "PENDING"
        SUCCESS = "SUCCESS"
        FAILED = "FAILED"

    class Run(SQLModel, table=True):
        id: int = Field(primary_key=True)
        state: RunState = Field(default=RunState.QUEUED)

    class JobBase(SQLModel):
        trace_id: str | None = None

    class Job(JobBase, table=True):
        __tablename__ = "job"
        id: UUID = Field(default_factory=uuid4, primary_key=True)
        error_message: str | None = Field(default=None)
        status: JobStatus = Field(default=JobStatus.PENDING)
"""
CRUD = """
    from app.models import Job

    class JobCrud:
        def __init__(self, session):
            self.session = session

        def create(self, trace_id=None):
            job = Job(trace_id=trace_id)
            self.session.add(job)
            return job
"""
TASKS = """
    from celery import Celery
    app = Celery("app")

    @app.task(bind=True)
    def execute_task(self, function_path: str, project_id: int, job_id: str, **kwargs):
        pass
"""
SERVICE = """
    from sqlmodel import Session
    from app.crud import JobCrud
    from app.tasks import execute_task

    def start_job(db: Session, project_id: int) -> str:
        job = JobCrud(session=db).create()
        execute_task.delay(function_path="app.service.run", project_id=project_id, job_id=str(job.id))
        return str(job.id)
"""
SETTINGS = """
    from pydantic_settings import BaseSettings

    class Settings(BaseSettings):
        POSTGRES_SERVER: str
        POSTGRES_PORT: int = 5432
        PROJECT_NAME: str
        CELERY_TASK_SOFT_TIME_LIMIT: int = 300
        CELERY_TASK_TIME_LIMIT: int = 600
        CALLBACK_READ_TIMEOUT: int = 10
        OPENAI_REQUEST_TIMEOUT: float = 60
"""


def _app(tmp_path: Path, **more: str) -> Path:
    files = {"app/models.py": MODELS, "app/crud.py": CRUD, "app/tasks.py": TASKS, "app/service.py": SERVICE,
             "app/config.py": SETTINGS, "app/__init__.py": "", **more}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text))
    return tmp_path


def test_a_sqlmodel_table_is_the_job_table_with_its_enums_final_states_and_its_repository_writer(tmp_path):
    found = scan(_app(tmp_path))
    job = next(t for t in found.tables if t.name == "job")
    assert job.columns == [("trace_id", False), ("id", True), ("error_message", False), ("status", False)]
    assert any(t.name == "run" for t in found.tables)  # SQLModel's default name: the class name lower-cased
    config = render(found).config
    assert 'job_table = "job"' in config and 'job_id_column = "id"' in config  # "job" before "run"
    assert 'terminal_states = ["SUCCESS", "FAILED"]' in config  # the state column's own enum, not RunState
    assert found.submit is not None and (found.submit.module, found.submit.name) == ("app.service", "start_job")


def test_the_job_id_is_read_by_name_when_the_callers_pass_it_by_keyword(tmp_path):
    config = render(scan(_app(tmp_path))).config
    assert 'job_id_from = "job_id"' in config


def test_the_job_id_is_read_by_position_when_the_callers_pass_it_so(tmp_path):
    service = SERVICE.replace('function_path="app.service.run", project_id=project_id, job_id=str(job.id)',
                              '"app.service.run", project_id, str(job.id)')
    assert 'job_id_from = "args[2]"' in render(scan(_app(tmp_path, **{"app/service.py": service}))).config


def test_a_callback_timeout_is_not_the_paid_calls_deadline(tmp_path):
    settings = SETTINGS.replace("    OPENAI_REQUEST_TIMEOUT: float = 60\n", "")
    config = render(scan(_app(tmp_path, **{"app/config.py": settings}))).config
    assert 'CALLBACK_READ_TIMEOUT = "1"' in config and "for a paid call" not in config
    assert not roles.deadline("CALLBACK_READ_TIMEOUT") and not roles.deadline("WEBHOOK_REQUEST_TIMEOUT")
    with_request = render(scan(_app(tmp_path))).config
    assert 'OPENAI_REQUEST_TIMEOUT = "2"' in with_request  # named for the provider: a paid call's floor


def test_a_server_setting_is_the_database_host_and_the_summary_counts_the_required_settings(tmp_path):
    scaffold = render(scan(_app(tmp_path)))
    assert 'POSTGRES_SERVER = "{database_host}"' in scaffold.config
    assert any("PROJECT_NAME" in todo for todo in scaffold.todos)  # on the terminal's count and list too


def test_scaled_task_time_limits_have_floors_and_what_outlasts_them_in_the_code_still_does(tmp_path):
    settings = SETTINGS.replace("CELERY_TASK_TIME_LIMIT: int = 600", "CELERY_TASK_TIME_LIMIT: int = 600\n"
                                "        VISIBILITY_TIMEOUT: int = 900\n        POLL_INTERVAL: int = 30")
    config = render(scan(_app(tmp_path, **{"app/config.py": settings}))).config
    # 300 s x 0.01 would be 3 s, shorter than a task's imports: x 0.0333 instead, for every duration as long
    assert 'CELERY_TASK_SOFT_TIME_LIMIT = "10"' in config and 'CELERY_TASK_TIME_LIMIT = "20"' in config
    assert 'VISIBILITY_TIMEOUT = "30"' in config  # still outlasts the hard limit, as in the code
    assert 'POLL_INTERVAL = "1"' in config  # shorter than the limits: x time_scale (0.3 s, a whole number)
    assert "time limit is at least 10 s, as a task's imports and connections are not scaled" in config
    close = settings.replace("CELERY_TASK_TIME_LIMIT: int = 600", "CELERY_TASK_TIME_LIMIT: int = 310")
    config = render(scan(_app(tmp_path / "close", **{"app/config.py": close}))).config
    assert 'CELERY_TASK_SOFT_TIME_LIMIT = "10"' in config and 'CELERY_TASK_TIME_LIMIT = "12"' in config
    assert "raised to CELERY_TASK_SOFT_TIME_LIMIT + 2 s" in config  # not 10.3 s: no time to handle the soft one


BUILT = """
    import secrets
    from pydantic import PostgresDsn, computed_field
    from pydantic_core import MultiHostUrl
    from pydantic_settings import BaseSettings

    class Settings(BaseSettings):
        SECRET_KEY: str = secrets.token_urlsafe(32)
        ENCRYPTION_KEY: str
        API_SECRET: str = "fixed in the code"
        POSTGRES_SERVER: str
        POSTGRES_PORT: int = 5432
        RABBITMQ_HOST: str = "localhost"
        RABBITMQ_PORT: int = 5672

        @computed_field
        @property
        def SQLALCHEMY_DATABASE_URI(self) -> PostgresDsn:
            return MultiHostUrl.build(scheme="postgresql+psycopg", host=self.POSTGRES_SERVER, port=self.POSTGRES_PORT)

        @computed_field
        @property
        def RABBITMQ_URL(self) -> str:
            return f"amqp://guest:guest@{self.RABBITMQ_HOST}:{self.RABBITMQ_PORT}//"

    settings = Settings()
"""
CELERY_ON_RABBITMQ = TASKS.replace('Celery("app")', 'Celery("app", broker=settings.RABBITMQ_URL)')


def test_a_rabbitmq_broker_is_a_todo_naming_the_setting_to_point_at_the_stacks_redis(tmp_path):
    scaffold = render(scan(_app(tmp_path, **{"app/config.py": BUILT, "app/tasks.py": CELERY_ON_RABBITMQ})))
    todo = next(t for t in scaffold.todos if "RabbitMQ" in t)
    assert "Celery(broker=settings.RABBITMQ_URL)" in todo and 'CELERY_BROKER_URL = "{redis_url}"' in todo
    assert f"# TODO(jobquake init): {todo.split('] ', 1)[1]}" in scaffold.config
    url_default = "from pydantic_settings import BaseSettings\nclass S(BaseSettings):\n    BROKER: str = 'pyamqp://x//'\n"
    other = render(scan(_app(tmp_path / "other", **{"app/config.py": url_default})))
    assert any('BROKER = "{redis_url}"' in t for t in other.todos)


def test_a_database_url_built_from_host_and_port_goes_through_the_proxys_tcp_address(tmp_path):
    config = render(scan(_app(tmp_path, **{"app/config.py": BUILT}))).config
    assert 'proxied = "paidapi,postgres"' in config
    assert "MultiHostUrl.build(host=...) in app.config builds the database URL" in config
    fstring = BUILT.replace('MultiHostUrl.build(scheme="postgresql+psycopg", host=self.POSTGRES_SERVER, '
                            'port=self.POSTGRES_PORT)',
                            'f"postgresql+psycopg://u:p@{self.POSTGRES_SERVER}:{self.POSTGRES_PORT}/db"')
    assert 'proxied = "paidapi,postgres"' in render(scan(_app(tmp_path / "f", **{"app/config.py": fstring}))).config
    assert "proxied" not in render(scan(_app(tmp_path / "plain"))).config  # a URL variable takes the socket


def test_a_secret_made_per_process_or_required_gets_one_fixed_value_for_every_process(tmp_path):
    config = render(scan(_app(tmp_path, **{"app/config.py": BUILT}))).config
    assert 'SECRET_KEY = "jobquake-throwaway-secret-' in config and 'ENCRYPTION_KEY = "jobquake-throwaway' in config
    assert "# a secret made anew in every process: every process of a test must share one" in config
    assert "API_SECRET =" not in config  # a fixed default is the same in every process already


def test_a_dependency_yielding_a_session_is_the_session_factory_when_no_sessionmaker_exists(tmp_path):
    from harness.scaffold.findings import Findings
    from harness.scaffold.project import Project
    from harness.scaffold import read_python

    (tmp_path / "deps.py").write_text(
        "from sqlmodel import Session\nfrom app.db import engine\n\n\n"
        "def get_db():\n    with Session(engine) as session:\n        yield session\n\n\n"
        "def helper():\n    return Session(engine)\n")
    found = Findings(tmp_path)
    read_python.read(Project(tmp_path), found)
    assert found.session_generators == ["deps:get_db"]  # the generator, not the plain function
