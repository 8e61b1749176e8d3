"""``jobquake init`` on a Django project: settings, models, migrations, processes, read from the source."""
from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.scaffold import render, scan
from harness.scaffold.django_jobs import final_states, required_row
from harness.scaffold.django_models import Field, Model
from harness.scaffold.django_processes import beat, web
from harness.scaffold.templates import FILES
from tests.common.scaffold import edits_beyond_todo_fills

REVIEWDESK = Path(__file__).resolve().parents[1] / "reviewdesk"
HAND = "added by hand after `jobquake init`"
CODE = ("manage.py", "Procfile", "reviewdesk", "contracts")


def _fresh(tmp_path: Path, under: str = "") -> Path:
    """The Django example app as it was before `jobquake init` (its code, its pyproject without the section)."""
    root = tmp_path / "reviewdesk"
    app = root / under if under else root
    app.mkdir(parents=True)
    for name in CODE:
        source = REVIEWDESK / name
        if source.is_dir():
            shutil.copytree(source, app / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, app / name)
    text = (REVIEWDESK / "pyproject.toml").read_text()
    (root / "pyproject.toml").write_text(text[:text.index("# jobquake: how to run")])
    return root


def test_it_reads_the_settings_models_migrations_and_processes_of_a_django_project(tmp_path):
    found = scan(_fresh(tmp_path))
    assert found.framework == "django"
    assert found.schema_command == "python manage.py migrate --noinput"
    job = found.tables[0]
    assert job.name == "contracts_contractreview" and ("id", True) in job.columns
    assert {"status", "attempts", "heartbeat_at", "failure_reason"} <= {c for c, _ in job.columns}
    # FINAL_STATUSES names TextChoices members; their values are what the column holds
    assert found.final_states == ("reviewed", "failed", "needs_lawyer")
    assert found.env_values["DATABASE_URL"][0] == "{database_dsn}"  # dj-database-url parses a libpq URL
    assert found.env_values["DJANGO_SETTINGS_MODULE"][0] == "reviewdesk.settings"
    assert (found.submit.module, found.submit.name) == ("contracts.services", "submit_review")
    assert set(found.commands) == {"web", "beat"} and "manage" not in found.processes
    assert found.commands["beat"].command == "celery -A reviewdesk beat --loglevel INFO --scheduler celery.beat:Scheduler"


def test_the_committed_scaffold_of_the_django_app_is_what_init_writes_plus_its_todos_and_marked_edits(tmp_path):
    root = _fresh(tmp_path)
    assert main(["init", str(root)]) == 0
    for rel in ["pyproject.toml", *(f"scenarios/{name}" for name in [*FILES, "test_commit_race.py"])]:
        written = (root / rel).read_text().splitlines()
        committed = (REVIEWDESK / rel).read_text().splitlines()
        # init's TODOs filled in (the sweep's POISON, mutants), and a few lines added by hand, each marked
        extra = edits_beyond_todo_fills(written, committed)
        assert not extra or any(HAND in line for line in committed), (rel, extra)
        assert len(extra) <= 8, (rel, extra)


def test_the_django_scaffold_leaves_only_the_sweeps_poison_row_to_fill(tmp_path):
    scaffold = render(scan(_fresh(tmp_path)))
    assert [t.split(":")[0] for t in scaffold.todos] == ["scenarios/test_sweep.py STALE_JOB, POISON"]
    sweep = scaffold.files["scenarios/test_sweep.py"]
    # the row the beat schedule's sweep selects: Q(status=Status.REVIEWING, heartbeat_at__lt=...)
    assert '"status": "reviewing",' in sweep and '"heartbeat_at": LONG_AGO,' in sweep
    pool = scaffold.files["scenarios/test_pool_exhaustion.py"]
    assert 'exhaust_pool(at="django.on_commit"' in pool and "sqlalchemy" not in pool
    assert 'DATABASE_URL = "{database_dsn}"' in scaffold.config
    assert "[tool.jobquake.processes.manage]" not in scaffold.config
    for text in scaffold.files.values():
        ast.parse(text)  # every scenario is valid Python


def test_a_manage_py_in_a_subfolder_puts_that_folder_on_the_path_and_names_modules_from_there(tmp_path):
    found = scan(_fresh(tmp_path, under="backend"))
    assert found.schema_command == "python backend/manage.py migrate --noinput"
    assert found.env_values["PYTHONPATH"][0] == "{root}/backend"
    assert found.celery_app == ("reviewdesk.celery", "app")
    assert (found.submit.module, found.tables[0].name) == ("contracts.services", "contracts_contractreview")
    assert found.commands["web"].command.startswith("gunicorn reviewdesk.wsgi")


@pytest.mark.parametrize("declared, expected", [
    ("gunicorn config.wsgi:application -b 0.0.0.0:$PORT", "gunicorn config.wsgi:application --bind 127.0.0.1:{port}"),
    ("python manage.py runserver 0.0.0.0:8000", "python manage.py runserver 127.0.0.1:{port} --noreload"),
    ("uvicorn config.asgi:application --host 0.0.0.0 --port 8000 --reload",
     "uvicorn config.asgi:application --host 127.0.0.1 --port {port}"),
    ("daphne -b 0.0.0.0 -p 8001 config.asgi:application", "daphne config.asgi:application -b 127.0.0.1 -p {port}"),
])
def test_a_web_command_is_moved_to_loopback_at_the_harness_port(declared, expected):
    assert web(declared) == expected


def test_beat_keeps_its_schedule_in_memory_and_logs_that_it_started():
    assert beat("celery -A config.celery_app beat -l info -S django_celery_beat.schedulers:DatabaseScheduler") == \
        "celery -A config.celery_app beat --loglevel INFO --scheduler celery.beat:Scheduler"


def test_final_states_are_guessed_from_the_choices_words_only_when_every_value_fits():
    sure = Field("status", "status", "CharField", choices=("pending", "processing", "completed", "failed"))
    assert final_states(sure, [], {}) == (("completed", "failed"), "guessed from the choices of status by their words")
    unsure = Field("status", "status", "CharField", choices=("pending", "ok", "failed"))
    assert final_states(unsure, [], {}) == ((), "")  # "ok": neither; left to a TODO


def test_a_row_the_harness_inserts_names_every_column_the_table_requires():
    model = Model("m", "Job", "app_job", [
        Field("id", "id", "BigAutoField", primary=True, auto=True),
        Field("title", "title", "CharField"),
        Field("note", "note", "TextField", null=True),
        Field("state", "state", "CharField", choices=("new", "done")),
        Field("owner", "owner_id", "ForeignKey"),
        Field("created", "created", "DateTimeField", auto=True),
    ])
    row = required_row(model, {})
    assert '"title": "title 1",' in row and '"state": "new",' in row and '"created": LONG_AGO,' in row
    assert "note" not in row and '"id"' not in row
    assert '"owner_id": None,  # TODO(jobquake init)' in row


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in {"manage.py": 'import os\nos.environ.setdefault("DJANGO_SETTINGS_MODULE", "conf.settings.local")\n'
                                   'if __name__ == "__main__":\n    pass\n', **files}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def test_split_settings_are_read_through_their_imports(tmp_path):
    root = _project(tmp_path, {
        "conf/settings/local.py": "from .base import *\n",
        "conf/settings/base.py": "import environ\nenv = environ.Env()\nDATABASES = {'default': env.db('APP_DB_URL')}\n"
                                 "from conf.celery_settings import *\n",
        "conf/celery_settings.py": "from conf.env import env\nCELERY_BROKER_URL = env('APP_BROKER_URL', default='x')\n",
    })
    found = scan(root)
    assert found.env_values["APP_DB_URL"][0] == "{database_dsn}"
    assert "APP_BROKER_URL" in found.env_vars and not found.env_todos


def test_a_database_or_broker_written_out_in_the_settings_is_a_todo_naming_it(tmp_path):
    root = _project(tmp_path, {"conf/settings/local.py": (
        "DATABASES = {'default': {'ENGINE': 'django.db.backends.sqlite3', 'NAME': 'db.sqlite3'}}\n"
        "CELERY_BROKER_URL = 'redis://localhost:6379/0'\n")})
    scaffold = render(scan(root))
    assert any("DATABASES in conf.settings.local reads no environment variable" in t for t in scaffold.todos)
    assert any("CELERY_BROKER_URL in conf.settings.local is written out" in t for t in scaffold.todos)
    assert "# TODO(jobquake init): CELERY_BROKER_URL" in scaffold.config


def test_databases_by_parts_get_the_parts_of_the_harness_database(tmp_path):
    root = _project(tmp_path, {"conf/settings/local.py": (
        "import os\nDATABASES = {'default': {'ENGINE': 'django.db.backends.postgresql',\n"
        "    'NAME': os.environ.get('PG_NAME'), 'USER': os.environ['PG_USER'], 'HOST': os.getenv('PG_HOST'),\n"
        "    'PORT': os.environ.get('PG_PORT', '5432'), 'PASSWORD': os.environ.get('PG_PASSWORD')}}\n")})
    values = {k: v for k, (v, _) in scan(root).env_values.items()}
    assert values["PG_NAME"] == "{database_name}" and values["PG_HOST"] == "{database_host}"
    assert values["PG_PORT"] == "{database_port}" and values["PG_USER"] == "{database_user}"
    assert values["PG_PASSWORD"] == "{database_password}"


def test_a_procfiles_environment_prefix_is_left_to_the_shell():
    assert beat("REMAP_SIGTERM=SIGQUIT celery -A app.tasks beat -l info") == \
        "celery -A app.tasks beat --loglevel INFO --scheduler celery.beat:Scheduler"


def test_a_django_environ_read_with_no_default_is_required_and_a_secret_gets_a_throwaway_value(tmp_path):
    root = _project(tmp_path, {
        ".env.example": "SECRET_KEY=changeme\nAPP_LICENSE_ID=abc\n",
        "conf/settings/local.py": "import environ\nenv = environ.Env(DEBUG_MODE=(bool, False))\n"
                                  "SECRET_KEY = env('SECRET_KEY')\nLICENSE = env.str('APP_LICENSE_ID')\n"
                                  "DEBUG = env('DEBUG_MODE')\nREGION = env('APP_REGION', default='eu')\n"
                                  "DATABASES = {'default': env.db('DATABASE_URL')}\n",
    })
    found = scan(root)
    required = {name for name, detail in found.env_details.items() if detail.required}
    assert required == {"SECRET_KEY", "APP_LICENSE_ID"}  # the scheme and default= give the others one
    config = render(found).config
    assert 'SECRET_KEY = "jobquake-throwaway-secret-not-for-production"' in config  # any value works in a test
    assert "(it does not start without them): APP_LICENSE_ID" in config


def test_with_no_sweeper_the_sweep_scenario_is_a_skip_saying_why_and_no_todo(tmp_path):
    root = _project(tmp_path, {"conf/settings/local.py": "import os\nDATABASES = {'default': {'NAME': os.environ['PG_NAME']}}\n"})
    scaffold = render(scan(root))
    sweep = scaffold.files["scenarios/test_sweep.py"]
    assert 'pytest.mark.skip(reason="no sweep process found: a job whose worker dies stays where it is; ' \
           'test_kill_worker.py shows it")' in sweep
    assert "STALE_JOB" not in sweep and not any("test_sweep.py" in todo for todo in scaffold.todos)
    ast.parse(sweep)


@pytest.mark.parametrize("read, expected", [
    ("ALLOWED_HOSTS = env.list('ALLOWED_HOSTS', default=[])", {"ALLOWED_HOSTS": "127.0.0.1,localhost"}),
    ("ALLOWED_HOSTS = os.environ.get('DJANGO_HOSTS', '').split(' ')", {"DJANGO_HOSTS": "127.0.0.1 localhost"}),
    ("ALLOWED_HOSTS = ['example.com']", {}),
])
def test_allowed_hosts_read_from_a_variable_get_loopback_in_its_format(tmp_path, read, expected):
    root = _project(tmp_path, {"conf/settings/local.py": f"import os, environ\nenv = environ.Env()\n{read}\n"})
    values = {k: v for k, (v, _) in scan(root).env_values.items() if "HOSTS" in k}
    assert values == expected


DRF_MODELS = '''from django.db import models


class Job(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending"
        DONE = "done"
        FAILED = "failed"

    id = models.UUIDField(primary_key=True)
    input_text = models.TextField()
    priority = models.IntegerField(default=0)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    updated_at = models.DateTimeField(auto_now=True)
'''
DRF_SERIALIZERS = '''from rest_framework import serializers
from .models import Job


class JobSerializer(serializers.ModelSerializer):
    class Meta:
        model = Job
        fields = ["id", "input_text", "priority", "status", "updated_at"]
        read_only_fields = ["id", "status", "updated_at"]
'''
DRF_TASKS = "from celery import shared_task\n\n\n@shared_task\ndef process_job(job_id):\n    pass\n"


def _drf_project(tmp_path: Path, views: str, urls: str) -> Path:
    return _project(tmp_path, {"conf/settings/local.py": "import os\nDATABASES = {'default': {'NAME': os.environ['PG_NAME']}}\n",
                               "jobs/__init__.py": "", "jobs/models.py": DRF_MODELS,
                               "jobs/serializers.py": DRF_SERIALIZERS, "jobs/tasks.py": DRF_TASKS,
                               "jobs/views.py": views, "jobs/urls.py": urls})


def test_a_drf_create_view_of_the_job_model_gets_an_adapter_calling_it_through_the_request_factory(tmp_path):
    root = _drf_project(tmp_path, '''from rest_framework import generics, status
from rest_framework.response import Response
from .models import Job
from .serializers import JobSerializer
from .tasks import process_job


class JobCreateView(generics.CreateAPIView):
    serializer_class = JobSerializer

    def create(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        job = serializer.save()
        process_job.delay(str(job.id))
        return Response({"event_id": job.id}, status=status.HTTP_201_CREATED)
''', 'from django.urls import path\nfrom .views import JobCreateView\nurlpatterns = [path("jobs/", JobCreateView.as_view())]\n')
    scaffold = render(scan(root))
    adapter = scaffold.files["scenarios/submit_adapter.py"]
    assert "from jobs.views import JobCreateView" in adapter and "JobCreateView.as_view()(request)" in adapter
    assert 'PATH = "/jobs/"' in adapter and 'ID_KEY = "event_id"' in adapter  # the key of the view's Response
    conftest = scaffold.files["scenarios/conftest.py"]
    assert 'SUBMIT = "scenarios.submit_adapter:submit"' in conftest
    # the serializer's writable fields, placeholders marked as such
    assert "'input_text': f\"input_text {n}\",  # TODO(jobquake init)" in conftest
    assert "'priority': n,  # TODO(jobquake init)" in conftest and "'status'" not in conftest
    assert not any("SUBMIT" in todo or "submit_adapter.py" in todo for todo in scaffold.todos)
    ast.parse(adapter)


def test_a_drf_viewset_is_called_by_its_create_action_and_an_unknown_id_key_is_a_named_todo(tmp_path):
    root = _drf_project(tmp_path, '''from rest_framework import viewsets
from rest_framework.response import Response
from .serializers import JobSerializer
from .tasks import process_job


class JobViewSet(viewsets.ModelViewSet):
    serializer_class = JobSerializer

    def perform_create(self, serializer):
        job = serializer.save()
        process_job.apply_async(args=[job.pk])

    def create(self, request, *args, **kwargs):
        super().create(request, *args, **kwargs)
        return Response({"ok": True})
''', 'from rest_framework.routers import DefaultRouter\nfrom .views import JobViewSet\nrouter = DefaultRouter()\n'
     'router.register(r"jobs", JobViewSet)\n')
    scaffold = render(scan(root))
    adapter = scaffold.files["scenarios/submit_adapter.py"]
    assert 'JobViewSet.as_view({"post": "create"})(request)' in adapter and 'PATH = "/jobs"' in adapter
    assert "ID_KEY = None  # TODO(jobquake init): the key of the new job's id" in adapter
    assert "scenarios/submit_adapter.py ID_KEY: the key of the new job's id in JobViewSet's response" in scaffold.todos


DRF_CREATE_VIEW = '''from rest_framework import generics
from .serializers import JobSerializer
from .tasks import process_job


class JobCreateView(generics.CreateAPIView):
    serializer_class = JobSerializer

    def perform_create(self, serializer):
        job = serializer.save()
        process_job.delay(job.pk)
'''


def test_a_submit_path_in_autocommit_gets_no_commit_race_and_its_pool_fault_after_the_write(tmp_path):
    root = _drf_project(tmp_path, DRF_CREATE_VIEW, "")
    scaffold = render(scan(root))
    race = scaffold.files["scenarios/test_commit_race.py"]
    assert 'pytest.mark.skip(reason="the submit path commits in autocommit before it queues: no commit to race")' \
        in race and "before_commit" not in race
    pool = scaffold.files["scenarios/test_pool_exhaustion.py"]
    assert 'exhaust_pool(at="django.after_write", match={**app.submitter_match(), "table": jq.config.job_table},' \
        in pool
    assert 'ID_KEY = "id"' in scaffold.files["scenarios/submit_adapter.py"]  # DRF's create: the serializer's data
    ast.parse(race), ast.parse(pool)


def test_atomic_requests_keep_the_commit_scenarios_and_the_adapter_calls_the_view_in_a_transaction(tmp_path):
    root = _drf_project(tmp_path, DRF_CREATE_VIEW, "")
    (root / "conf/settings/local.py").write_text(
        "import os\nDATABASES = {'default': {'NAME': os.environ['PG_NAME'], 'ATOMIC_REQUESTS': True}}\n")
    scaffold = render(scan(root))
    assert 'failpoint("django.before_commit"' in scaffold.files["scenarios/test_commit_race.py"]
    assert 'exhaust_pool(at="django.on_commit", match=app.submitter_match(),' in \
        scaffold.files["scenarios/test_pool_exhaustion.py"]
    adapter = scaffold.files["scenarios/submit_adapter.py"]
    assert "    with transaction.atomic():" in adapter and "        response = JobCreateView.as_view()(request)" in adapter
    ast.parse(adapter)
