"""Provider routing, timeouts and Celery overrides: what the instrumentation decides, without a process."""
from __future__ import annotations

import aiohttp
import pytest

from harness.errors import ConfigError
from harness.instrument._routes import Routes, parse_paid_hosts
from harness.instrument._timeouts import TimeoutPolicy, header
from harness.instrument.celery_settings import restore_cadence, scaled

PAID = "http://127.0.0.1:4100"


@pytest.mark.parametrize("called, sent", [
    ("https://api.openai.com/v1/chat/completions", f"{PAID}/v1/chat/completions"),
    ("https://API.OpenAI.com:443/v1/responses", f"{PAID}/v1/responses"),
    ("https://openrouter.ai/api/v1/chat/completions", f"{PAID}/v1/chat/completions"),
    ("https://api.anthropic.com/v1/messages", f"{PAID}/v1/messages"),
    ("https://api.groq.com/openai/v1/chat/completions", f"{PAID}/v1/chat/completions"),
    ("https://api.deepseek.com/chat/completions", f"{PAID}/v1/chat/completions"),
    ("https://api.deepseek.com/v1/chat/completions", f"{PAID}/v1/chat/completions"),
    ("http://localhost:11434/api/chat", f"{PAID}/api/chat"),
    (f"{PAID}/v1/chat/completions", f"{PAID}/v1/chat/completions"),  # already the paid API's
])
def test_known_provider_hosts_go_to_the_paid_api_on_the_path_it_serves(called, sent):
    assert Routes(PAID).target(called) == sent


@pytest.mark.parametrize("called", ["https://api.openai.com.evil.example/v1/x", "https://example.com/v1/chat",
                                    "https://openrouter.ai/apix/v1/chat/completions", "http://localhost:6379/0"])
def test_other_urls_are_no_paid_calls(called):
    assert Routes(PAID).target(called) is None


def test_paid_hosts_from_config_add_routes_and_nothing_routes_without_a_paid_api():
    extra = parse_paid_hosts('{"https://llm.internal.example/openai": "/v1"}')
    assert Routes(PAID, extra).target("https://llm.internal.example/openai/chat/completions") == \
        f"{PAID}/v1/chat/completions"
    assert parse_paid_hosts('["https://gw.example"]') == {"https://gw.example": ""}
    assert Routes("").target("https://api.openai.com/v1/chat/completions") is None
    with pytest.raises(ValueError, match="not a URL prefix"):
        parse_paid_hosts('["gw.example"]')


def test_only_listed_production_timeouts_are_scaled_part_by_part():
    policy = TimeoutPolicy(0.01, [45, 600])
    new, asked, sent = policy.httpx({"connect": 5.0, "read": 600.0, "write": 600.0, "pool": 600.0})
    assert new == {"connect": 5.0, "read": 6.0, "write": 6.0, "pool": 6.0} and (asked, sent) == (600.0, 6.0)
    assert policy.httpx({"connect": 1.2, "read": 1.2, "write": 1.2, "pool": 1.2})[2] == 1.2  # not listed
    assert policy.requests((3, 45)) == ((3, 2.0), 45, 2.0)  # 0.45 s, but never below 2 s: a kill mid-call needs room
    assert TimeoutPolicy(0.01, [1.5]).requests(1.5) == (1.5, 1.5, 1.5)  # nor above the production value
    assert policy.requests(None) == (None, None, None) and header(None) == "none"
    new, asked, sent = policy.aiohttp(aiohttp.ClientTimeout(total=600, connect=5))
    assert (new.total, new.connect, asked, sent) == (6.0, 5, 600, 6.0)


def test_celery_settings_are_scaled_where_they_are_durations():
    table = {"broker_transport_options": {"visibility_timeout": 3600, "unacked_restore_interval": 10,
                                          "unacked_restore_throttle": 1, "priority_steps": [0, 9]},
             "task_soft_time_limit": 600, "task_acks_late": True,
             "tasks": {"app.work": {"time_limit": 300}}, "beat_schedule": {"sweep": 60},
             "scale_retry_delays": True}
    out = scaled(table, 0.01)
    assert out["conf"]["broker_transport_options"] == {"visibility_timeout": 36.0, "unacked_restore_interval": 0.5,
                                                       "unacked_restore_throttle": 1, "priority_steps": [0, 9]}
    assert out["conf"]["task_soft_time_limit"] == 6.0 and out["conf"]["task_acks_late"] is True
    assert out["tasks"] == {"app.work": {"time_limit": 3.0}} and out["beat_schedule"] == {"sweep": 0.6}
    assert out["retry_scale"] == 0.01
    assert restore_cadence(table, 0.01) == (36.0, 0.5, True)
    assert restore_cadence({}, 0.01) == (3600.0, 100.0, False)  # kombu's defaults, unscaled: nothing set them


@pytest.mark.parametrize("table, key", [({"tasks": {"t": {"rate_limit": "1/s"}}}, "celery.tasks.t"),
                                        ({"beat_schedule": {"sweep": "60"}}, "celery.beat_schedule.sweep"),
                                        ({"task_time_limit": -1}, "celery.task_time_limit")])
def test_a_bad_celery_setting_names_its_key(table, key):
    with pytest.raises(ConfigError) as caught:
        scaled(table, 0.01)
    assert caught.value.key == key


def test_a_broker_or_database_is_the_stacks_by_host_and_port(capfd):
    from harness.instrument._targets import Targets

    targets = Targets(["redis://:secret@127.0.0.1:6400/0"], ["postgresql+psycopg://u:p@127.0.0.1:5500/app"])
    targets.check("broker", "redis://localhost:6400/3")  # loopback either way, same port: ours
    targets.check("database", "postgresql://u:p@127.0.0.1:5500/template")
    assert capfd.readouterr().err == ""
    targets.check("broker", "redis://localhost:6379/0")
    targets.check("broker", "redis://localhost:6379/0")  # once per URL
    err = capfd.readouterr().err
    assert err.count("WRONG TARGET") == 1
    assert "the broker redis://localhost:6379/0, not the stack's redis://:***@127.0.0.1:6400/0" in err


def test_settle_says_when_a_dead_workers_message_comes_back():
    from harness.pending.broker import RestoreCadence

    due = RestoreCadence(36.0, 1.0, True).due(delivered=100.0, now=110.0)
    assert due == ("if its worker died, back in its queue after visibility_timeout 36 s, 26.0 s from now, "
                   "at a restore sweep every 1 s (as [tool.jobquake.celery] sets it)")
    assert "kombu's defaults" in RestoreCadence(3600.0, 100.0, False).due(None, 0.0)


def test_a_unix_socket_of_the_stack_is_not_every_loopback_address(capfd):
    """The stack's servers listen on private sockets: a URL without a host must not pass for the app's
    own default (redis://localhost:6379), nor a socket for another socket."""
    from harness.instrument._targets import Targets

    targets = Targets(["redis://:s@127.0.0.1:6400/0", "unix:///run/jq/redis-1.sock?password=s"],
                      ["postgresql+psycopg://u:p@/app?host=/run/jq&port=5500"])
    targets.check("database", "postgresql+psycopg://u:***@/app?host=/run/jq&port=5500")  # ours, by its socket
    assert capfd.readouterr().err == ""
    targets.check("broker", "redis://localhost:6379/0")
    targets.check("database", "postgresql+psycopg://u:***@/app?host=/var/run/postgresql")
    err = capfd.readouterr().err
    assert "the broker redis://localhost:6379/0, not the stack's" in err
    assert "the database postgresql+psycopg://u:***@/app?host=/var/run/postgresql, not the stack's" in err
