"""The budget audit and the table-scan sampler without a stack: Celery and Postgres answers faked."""
from __future__ import annotations

import itertools
from types import SimpleNamespace

import pytest

from harness import budgets, querystats
from harness.budgets import (BudgetAuditError, audit_budgets, declared_budgets, effective_limits,
                             parse_registered, pool_limits, worst_case)
from harness.checks import effective_budget, query_budget
from harness.errors import ConfigError
from harness.history import Recorder
from harness.querystats import QueryStatsError, ScanCounter, TableScans, settled_scans

# what `inspect().registered("soft_time_limit", "time_limit")` answers for one worker
REGISTERED = ["app.import_rows [soft_time_limit=3.0 time_limit=3.6]", "app.summarize"]
STATS_NO_POOL_LIMIT = {"pool": {"max-concurrency": 2, "timeouts": [0, 0]}}
STATS_BLANKET_SOFT = {"pool": {"max-concurrency": 2, "timeouts": [1.2, 0]}}


def declared(time_scale: float) -> dict:
    """A ``budgets`` callable as an app would write it: real seconds times the scale."""
    return {"app.import_rows": {"soft": 300 * time_scale, "hard": 360 * time_scale},
            "app.summarize": {"soft": 600 * time_scale, "hard": 900 * time_scale}}


def declared_without_scale() -> dict:
    return {"app.summarize": {"soft": 6, "hard": None}}


def not_a_table(time_scale: float) -> list:
    return ["app.summarize"]


def not_seconds(time_scale: float) -> dict:
    return {"app.summarize": {"soft": "ten minutes"}}


# -- reading Celery's answers -------------------------------------------------------------
def test_registered_lines_give_each_tasks_own_limits_and_none_when_left_out():
    assert parse_registered(REGISTERED) == {"app.import_rows": {"soft": 3.0, "hard": 3.6},
                                            "app.summarize": {"soft": None, "hard": None}}


def test_other_task_attributes_are_ignored_and_garbage_is_an_error():
    assert parse_registered(["t [rate_limit=10/m soft_time_limit=2.5]"]) == {"t": {"soft": 2.5, "hard": None}}
    with pytest.raises(BudgetAuditError, match="soft_time_limit=abc"):
        parse_registered(["t [soft_time_limit=abc]"])
    with pytest.raises(BudgetAuditError, match="cannot read"):
        parse_registered(["t [oops]"])


def test_pool_timeouts_are_soft_then_hard_and_zero_means_none():
    assert pool_limits(STATS_NO_POOL_LIMIT) == {"soft": None, "hard": None}
    assert pool_limits({"pool": {"timeouts": [1.2, 30]}}) == {"soft": 1.2, "hard": 30.0}
    with pytest.raises(BudgetAuditError, match="pool.timeouts"):
        pool_limits({"pool": {"max-concurrency": 4}})  # e.g. a solo pool: it enforces no limit at all


def test_a_task_without_its_own_limit_runs_on_the_pools():
    assert effective_limits(REGISTERED, STATS_NO_POOL_LIMIT)["app.summarize"] == {"soft": None, "hard": None}
    assert effective_limits(REGISTERED, STATS_BLANKET_SOFT) == {
        "app.import_rows": {"soft": 3.0, "hard": 3.6},  # its own limits win over the pool's
        "app.summarize": {"soft": 1.2, "hard": None}}


def test_an_error_reply_is_not_read_as_tasks():
    with pytest.raises(BudgetAuditError, match="not a list"):
        effective_limits({"error": "No such inspect command"}, STATS_NO_POOL_LIMIT)


def test_the_worst_worker_speaks_for_a_task():
    want = {"soft": 6.0, "hard": 9.0}
    agree = {"w2": dict(want), "w1": dict(want)}
    assert worst_case(want, agree) == (want, "w1")
    odd = {"w1": dict(want), "w2": {"soft": 1.2, "hard": None}}
    assert worst_case(want, odd) == ({"soft": 1.2, "hard": None}, "w2")


# -- the declared side ----------------------------------------------------------------------
def test_declared_budgets_are_called_with_the_time_scale():
    table = declared_budgets(f"{__name__}:declared", 0.01)
    assert table["app.summarize"] == pytest.approx({"soft": 6.0, "hard": 9.0})
    assert declared_budgets(f"{__name__}:declared_without_scale", 0.01) == {
        "app.summarize": {"soft": 6.0, "hard": None}}


def test_refapps_declared_budgets_are_readable():
    assert declared_budgets("refapp.budgets:declared_budgets", 0.01)["refapp.process_job"] == \
        pytest.approx({"soft": 6.0, "hard": 9.0})


@pytest.mark.parametrize("spec, message", [
    ("", "budgets is not set"),
    ("no_such_module_here:budgets", "cannot import"),
    (f"{__name__}:not_a_table", "not {task"),
    (f"{__name__}:not_seconds", "not a number of seconds"),
])
def test_a_bad_budgets_setting_names_the_key(spec, message):
    with pytest.raises(ConfigError, match=message) as caught:
        declared_budgets(spec, 0.01)
    assert caught.value.key == "budgets"


# -- the audit, with the workers' answers faked ------------------------------------------
def fake_run(tmp_path, workers: int = 2) -> SimpleNamespace:
    config = SimpleNamespace(budgets=f"{__name__}:declared", time_scale=0.01, root=None)
    return SimpleNamespace(config=config, redis_url="redis://127.0.0.1:1/0", workers=[None] * workers,
                           history=Recorder(tmp_path / "history.jsonl"))


def answers(*per_worker: dict) -> dict:
    return {f"worker{i}@host": limits for i, limits in enumerate(per_worker, start=1)}


def test_the_audit_records_both_sides_and_the_checker_passes_when_they_agree(tmp_path, monkeypatch):
    run = fake_run(tmp_path)
    right = effective_limits(["app.import_rows [soft_time_limit=3.0 time_limit=3.6]",
                              "app.summarize [soft_time_limit=6.0 time_limit=9.0]"], STATS_NO_POOL_LIMIT)
    asked = []
    monkeypatch.setattr(budgets, "ask_workers",
                        lambda url, expected, timeout: asked.append((url, expected)) or answers(right, right))

    audit_budgets(run)

    history = run.history.events()
    assert asked == [("redis://127.0.0.1:1/0", 2)]
    assert len(history.by_source("budget", name="declared")) == 2
    assert len(history.by_source("budget", name="effective")) == 2
    assert effective_budget(history, None).valid is True


def test_one_worker_with_a_blanket_limit_makes_the_audit_invalid(tmp_path, monkeypatch):
    run = fake_run(tmp_path)
    right = effective_limits(["app.import_rows [soft_time_limit=3.0 time_limit=3.6]",
                              "app.summarize [soft_time_limit=6.0 time_limit=9.0]"], STATS_NO_POOL_LIMIT)
    blanket = effective_limits(REGISTERED, STATS_BLANKET_SOFT)
    monkeypatch.setattr(budgets, "ask_workers", lambda url, expected, timeout: answers(right, blanket))

    audit_budgets(run)

    result = effective_budget(run.history.events(), None)
    assert result.valid is False
    assert result.counterexample[0]["task"] == "app.summarize"
    assert result.counterexample[0]["effective"] == {"soft": 1.2, "hard": None}
    summarize = [e for e in run.history.events().by_source("budget", name="effective")
                 if e.data["task"] == "app.summarize"][0]
    assert summarize.data["worker"] == "worker2@host" and summarize.data["agree"] is False


def test_an_unreachable_broker_is_a_clear_error():
    with pytest.raises(BudgetAuditError, match="cannot ask the workers over redis://127.0.0.1:1/0"):
        budgets.ask_workers("redis://127.0.0.1:1/0", expected=1, timeout=0.2)


# -- the scan sampler, with Postgres's counters faked ------------------------------------
class FakeStats:
    """Stands in for ``read_scans``: the counters are whatever the test last set."""

    def __init__(self, seq_scan: int = 0, idx_scan: int = 0, then: tuple[tuple[int, int], ...] = ()):
        self.now = (seq_scan, idx_scan)
        self.then = list(then)  # values the next reads return, one each, before ``now`` again

    def __call__(self, dsn: str, table: str, schema: str = "public") -> TableScans:
        if self.then:
            self.now = self.then.pop(0)
        return TableScans(table, *self.now, wall=0.0)


def test_the_counters_are_read_once_they_stop_moving(monkeypatch):
    monkeypatch.setattr(querystats, "read_scans", FakeStats(then=((0, 1), (0, 3), (0, 7))))
    assert settled_scans("dsn", "categories", quiet=0.05, timeout=5).idx_scan == 7


def test_counters_that_never_settle_are_an_error(monkeypatch):
    moving = itertools.count()
    monkeypatch.setattr(querystats, "read_scans",
                        lambda dsn, table, schema="public": TableScans(table, next(moving), 0, 0.0))
    monkeypatch.setattr(querystats, "POLL", 0.01)
    with pytest.raises(QueryStatsError, match="kept being scanned"):
        settled_scans("dsn", "categories", quiet=0.2, timeout=0.3)


def test_a_batch_records_its_scans_for_the_query_budget(tmp_path, monkeypatch):
    stats = FakeStats(2, 5)
    monkeypatch.setattr(querystats, "read_scans", stats)
    history = Recorder(tmp_path / "history.jsonl")
    counter = ScanCounter("dsn", "categories", quiet=0.05).start()
    stats.now = (3, 21)  # the batch ran

    assert counter.record(history, items=8, job_id="j1") == 17

    (event,) = history.events().by_source("query", name="scan")
    assert event.job_id == "j1"
    assert event.data == {"table": "categories", "scans": 17, "items": 8,
                          "counters": ["seq_scan", "idx_scan"], "seq_scan": 1, "idx_scan": 16}
    assert query_budget(history.events(), None, budget={"categories": 0.5}).valid is False


def test_only_the_chosen_counters_count(monkeypatch):
    stats = FakeStats()
    monkeypatch.setattr(querystats, "read_scans", stats)
    counter = ScanCounter("dsn", "categories", counters=("seq_scan",), quiet=0.05).start()
    stats.now = (1, 40)
    assert counter.stop() == 1
    with pytest.raises(ValueError, match="unknown counters"):
        ScanCounter("dsn", "categories", counters=("n_live_tup",))


def test_stopping_a_counter_that_never_started_is_an_error():
    with pytest.raises(QueryStatsError, match="before it was started"):
        ScanCounter("dsn", "categories").stop()
