"""[tool.jobquake.celery] inside real workers, beat and publishers; a worker on another broker stops its start.

A small project in a temporary folder: a Celery app whose task sets its
own time limits in its decorator, and a beat entry every minute. The
config scales them (as `jobquake init` writes them, in production seconds).
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from celery import Celery

from harness._wait import wait_until
from harness.config import resolve
from harness.errors import ServiceError
from harness.stack import reaper
from harness.stack.stack import Stack

pytestmark = pytest.mark.integration

APP = '''
import os
from celery import Celery

app = Celery("limits", broker=os.environ.get("LIMITS_BROKER", "redis://localhost:6379/0"))
app.conf.update(beat_schedule={"tick": {"task": "limits.tick", "schedule": 60.0}})


@app.task(name="limits.work", soft_time_limit=240, time_limit=300)
def work(job_id):
    return job_id


@app.task(name="limits.tick")
def tick():
    return "tick"
'''
CONFIG = '''
[tool.jobquake]
worker_command = "celery -A limits worker --pool prefork --concurrency 1 -n {name}@%h --without-mingle --without-gossip --without-heartbeat --loglevel INFO"
workers = 1
time_scale = 0.01
job_id_from = "args[0]"

[tool.jobquake.env]
PYTHONPATH = "{root}"
ENV_LINE

[tool.jobquake.celery]
broker_transport_options = { visibility_timeout = 3600, unacked_restore_interval = 100, unacked_restore_throttle = 1 }
tasks = { "limits.work" = { soft_time_limit = 240, time_limit = 300 } }
beat_schedule = { tick = 60 }

[tool.jobquake.processes.beat]
command = "celery -A limits beat --loglevel INFO -S celery.beat:Scheduler"
ready = "log:beat: Starting..."
'''


def _project(tmp_path: Path, env: str) -> Stack:
    (tmp_path / "limits.py").write_text(APP)
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent(CONFIG.replace("ENV_LINE", env)))
    config = resolve(environ={}, pyproject=tmp_path / "pyproject.toml")
    return Stack(config, reaper.run_dir() / f"celery-{tmp_path.name}")


def test_workers_beat_and_publishers_run_with_the_scaled_settings(tmp_path):
    with _project(tmp_path, 'LIMITS_BROKER = "{redis_url}"') as stack:
        # a publisher that never saw the config: the worker still runs the task with the scaled limits
        Celery(broker=stack.values["redis_url"]).send_task("limits.work", args=["job-1"])
        runs = wait_until(lambda: [r for r in stack.instrument.records()
                                   if r["name"] == "task" and r["type"] == "invoke"], timeout=30)
        work = next(r for r in runs if r["data"]["task"] == "limits.work")
        assert (work["data"]["soft_time_limit"], work["data"]["time_limit"]) == (2.4, 3.0)
        # beat sends its tick every 0.6 s, not every minute
        ticks = wait_until(lambda: len([r for r in stack.instrument.records()
                                        if r["type"] == "invoke" and r["data"].get("task") == "limits.tick"]) >= 3
                           and True, timeout=30)
        assert ticks
        assert stack.instrument.broker_settings() == {"transport": "redis", "visibility_timeout": 36.0,
                                                      "unacked_restore_interval": 1.0,
                                                      "unacked_restore_throttle": 1}


def test_a_worker_on_the_apps_default_broker_fails_its_start_naming_both_urls(tmp_path):
    stack = _project(tmp_path, "")  # LIMITS_BROKER not set: the app falls back to localhost:6379
    with pytest.raises(ServiceError) as caught:
        stack.start()
    message = str(caught.value)
    assert "connects to the broker redis://localhost:6379/0, not the stack's redis://" in message
    assert stack.values["redis_url"].rsplit("@", 1)[-1] in message


def test_a_worker_on_an_amqp_broker_fails_its_start_at_once_naming_both_urls(tmp_path):
    # a RabbitMQ app's broker: its start fails at the first connection, not after start_timeout of retries
    stack = _project(tmp_path, 'LIMITS_BROKER = "amqp://guest:guest@127.0.0.1:5672//"')
    with pytest.raises(ServiceError) as caught:
        stack.start()
    message = str(caught.value)
    assert "connects to the broker amqp://guest:***@127.0.0.1:5672//, not the stack's redis://" in message
    assert f"(or its SQS at {stack.values['sqs_endpoint']})" in message
