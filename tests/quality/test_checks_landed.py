"""A fault must land: each kind, once where it took effect and once where it could not."""
from __future__ import annotations

from harness.checks import UNKNOWN
from harness.checks.landed import faults_landed
from harness.history.builder import HistoryBuilder

WORKER = {"worker": "worker-0", "pid": 100, "tree": [100, 101]}


def judge(b: HistoryBuilder):
    return faults_landed(b.history(), None)


def test_a_kill_of_the_worker_holding_the_named_call_landed():
    b = HistoryBuilder()
    call = b.call("j1", 1.0, 3.0, caller_pid=101)
    b.fault("kill_worker", 2.0, 4.0, details={**WORKER, "call_id": call})
    result = judge(b)
    assert result.valid is True and "which held call call-1 of job j1" in result.message
    assert result.details["effects"][0]["effect_at"] == 0.0  # the call began at the first event


def test_a_kill_whose_named_call_was_made_by_another_process_did_not_land():
    b = HistoryBuilder()
    call = b.call("j1", 1.0, 3.0, caller_pid=999)
    b.fault("kill_worker", 2.0, 4.0, details={**WORKER, "call_id": call})
    result = judge(b)
    assert result.valid == UNKNOWN and "made by pid 999, not by that worker" in result.message


def test_a_kill_now_of_an_idle_worker_did_not_land():
    b = HistoryBuilder()
    b.fault("kill_worker", 1.0, 2.0, details=WORKER)
    b.call("j1", 3.0, 3.5, caller_pid=555)  # another worker's call, after the kill
    b.state("j1", 4.0, "done", attempt=1)
    result = judge(b)
    assert result.valid == UNKNOWN
    assert result.message.endswith("kill_worker killed worker-0 (pid 100), which held no paid call, and no "
                                   "job was given another attempt after it")


def test_a_kill_now_lands_on_a_held_call_or_a_retry():
    b = HistoryBuilder()
    b.call("j1", 0.5, None, caller_pid=101)
    b.fault("kill_worker", 1.0, 2.0, details=WORKER)
    assert judge(b).valid is True
    b = HistoryBuilder()
    b.fault("kill_worker", 1.0, 2.0, details=WORKER)
    b.state("j1", 3.0, "running", attempt=2)
    assert judge(b).valid is True


def test_a_kill_at_a_failpoint_the_app_never_reached_did_not_land():
    b = HistoryBuilder()
    b.fault("kill_worker", 1.0, 2.0, details={**WORKER, "failpoint": "task.item"})
    assert judge(b).valid == UNKNOWN
    b = HistoryBuilder()
    b.failpoint("task.item", 0.9, action="kill", job_id="j1")
    b.fault("kill_worker", 1.0, 2.0, details={**WORKER, "failpoint": "task.item"})
    assert judge(b).valid is True


def test_a_deferred_kill_that_never_fired_did_not_land():
    b = HistoryBuilder()
    b.event("fault", "invoke", "inject", 1.0, fault="kill_worker", params={"index": 0})
    b.event("fault", "fail", "inject", 2.0, fault="kill_worker", params={"index": 0},
            error="no paid call of job 'x' reached the provider within 1s")
    result = judge(b)
    assert result.valid == UNKNOWN and "was never injected: no paid call of job 'x'" in result.message


def test_a_hang_with_no_call_did_not_land_and_one_with_a_held_call_did():
    b = HistoryBuilder()
    b.call("j1", 0.5, 0.6)  # before the hang
    b.fault("hang_endpoint", 1.0, 2.0, layer="provider", job_id=None, route=None)
    result = judge(b)
    assert result.valid == UNKNOWN and "no call was held (hung) while it was" in result.message
    b.call("j2", 1.5, None, state="hung", status=None)
    assert judge(b).valid is True


def test_a_network_hang_lands_when_a_call_went_through_it():
    b = HistoryBuilder()
    b.fault("hang_endpoint", 1.0, 2.0, layer="network", proxy="paidapi", stream="downstream")
    assert "no paid call went through it" in judge(b).message
    b.call("j1", 1.2, 1.3, client_gone=True)
    assert judge(b).valid is True


def test_pool_exhaustion_with_no_checkout_did_not_land():
    b = HistoryBuilder()
    b.fault("exhaust_pool", 1.0, 2.0, at="submit.after_job_write", resource="db_engine")
    result = judge(b)
    assert result.valid == UNKNOWN and "the app never reached it" in result.message
    b.failpoint("submit.after_job_write", 1.5, action="exhaust_pool", job_id="j1")
    assert judge(b).valid is True


def test_a_poison_row_never_reached_did_not_land():
    b = HistoryBuilder()
    b.fault("poison_row", 1.0, 5.0, details={"row": {"customer": "poison"}, "inserted": {"id": 7}},
            table="invoices")
    result = judge(b)
    assert result.valid == UNKNOWN and "no sweep run was recorded after row 7" in result.message
    b.sweep(3.0, eligible=["5", "6"], processed=["5", "6"], failed=[])
    assert "none reached row 7" in judge(b).message
    b.sweep(4.0, eligible=["7"], processed=[], failed=["7"], run_id="sweep-2")
    assert judge(b).valid is True


def test_faults_without_a_rule_are_listed_not_passed_off_as_landed():
    b = HistoryBuilder()
    b.fault("a_users_own_fault", 1.0, 2.0)
    result = judge(b)
    assert result.details["unjudged"] == ["a_users_own_fault"] and "no landing rule" in result.message


def test_every_registered_fault_has_a_landing_rule():
    from harness.checks.landed import RULES
    from harness.faults.registry import FAULTS

    assert sorted(set(FAULTS) - set(RULES)) == []


def windowed(b: HistoryBuilder, fault: str, inject: float, heal: float, details: dict | None = None,
             healed: dict | None = None, **params) -> None:
    """A fault window whose ``ok heal`` carries ``healed`` (what the fault saw meanwhile)."""
    b.event("fault", "invoke", "inject", inject, fault=fault, params=params)
    b.event("fault", "ok", "inject", inject, fault=fault, params=params, **(details or {}))
    b.event("fault", "invoke", "heal", heal, fault=fault, params=params)
    b.event("fault", "ok", "heal", heal, fault=fault, params=params, **(healed or {}))


def test_a_paused_worker_lands_only_if_it_held_a_paid_call_when_frozen():
    frozen = {**WORKER, "role": "worker"}
    b = HistoryBuilder()
    b.call("j1", 0.5, 3.0, caller_pid=101)
    windowed(b, "pause_service", 1.0, 2.0, frozen, service="worker1")
    result = judge(b)
    assert result.valid is True and "froze worker1 (pid 100) while it held call call-1 of job j1" in result.message
    b = HistoryBuilder()
    b.state("j1", 0.5, "running", attempt=1)  # silent over the window, but maybe on another worker
    b.call("j1", 2.5, 3.0, caller_pid=555)
    windowed(b, "pause_service", 1.0, 2.0, frozen, service="worker1")
    b.state("j1", 3.5, "done", attempt=1)
    result = judge(b)
    assert result.valid == UNKNOWN and "froze worker1 (pid 100), which held no paid call, and the app " \
        "logged no timeout" in result.message


def test_a_paused_broker_lands_on_a_logged_timeout_or_a_job_stalled_across_the_window():
    frozen = {"pid": 7, "tree": [7], "role": "infrastructure"}
    b = HistoryBuilder()
    windowed(b, "pause_service", 1.0, 2.0, frozen, {"app_errors": 1, "app_error_lines": [
        "relay: redis.exceptions.TimeoutError: Timeout reading from socket"]}, service="redis")
    assert judge(b).valid is True and "Timeout reading from socket" in judge(b).message
    b = HistoryBuilder()
    b.state("j1", 0.5, "queued", attempt=1)
    windowed(b, "pause_service", 1.0, 2.0, frozen, service="redis")
    b.state("j1", 2.5, "running", attempt=1)
    result = judge(b)
    assert result.valid is True and "job j1 was in flight, made no progress while it was frozen" in result.message


def test_a_paused_broker_that_nothing_waited_on_did_not_land():
    frozen = {"pid": 7, "tree": [7], "role": "infrastructure"}
    b = HistoryBuilder()
    b.state("j1", 0.5, "running", attempt=1)
    b.call("j1", 0.6, 2.4, caller_pid=101)  # the job was busy with a paid call: its silence is explained
    windowed(b, "pause_service", 1.0, 2.0, frozen, service="redis")
    b.state("j1", 2.5, "done", attempt=1)
    b.state("j2", 0.2, "done", attempt=1)  # finished before the pause
    result = judge(b)
    assert result.valid == UNKNOWN
    assert "froze redis (pid 7), which held no paid call, no job in flight stalled" in result.message


def test_a_database_restart_lands_only_when_the_app_saw_the_database_go():
    b = HistoryBuilder()
    windowed(b, "database_restart", 1.0, 2.0, {"old_pid": 1, "pid": 2}, {"pid": 2, "app_errors": 0})
    result = judge(b)
    assert result.valid == UNKNOWN and "no app process logged a lost connection" in result.message
    b = HistoryBuilder()
    windowed(b, "database_restart", 1.0, 2.0, {"old_pid": 1, "pid": 2}, {"pid": 2, "app_errors": 1,
             "app_error_lines": ["worker1: sqlalchemy.pool: Pool pre-ping on connection x failed"]})
    assert judge(b).valid is True and "pre-ping" in judge(b).message


def test_a_toxic_lands_when_bytes_went_through_it_while_it_was_set():
    b = HistoryBuilder()
    windowed(b, "network_toxic", 1.0, 2.0, healed={"toxic_bytes": 812}, proxy="postgres", type="latency")
    result = judge(b)
    assert result.valid is True and "network_toxic on postgres: 812 byte(s) went through it" in result.message
    b = HistoryBuilder()
    b.call("j1", 1.5, 1.8)  # a paid call, but the count is what the toxic saw: nothing
    windowed(b, "network_toxic", 1.0, 2.0, healed={"toxic_bytes": 0}, proxy="paidapi", type="latency")
    assert judge(b).valid == UNKNOWN and "no byte went through it" in judge(b).message


def test_a_toxic_on_a_proxy_that_counts_nothing_is_unknown_except_on_the_paid_api():
    b = HistoryBuilder()
    windowed(b, "network_toxic", 1.0, 2.0, healed={"toxic_bytes": None}, proxy="postgres", type="latency")
    result = judge(b)
    assert result.valid == UNKNOWN and "cannot tell whether any bytes passed: the proxy reports no byte " \
        "count" in result.message
    b = HistoryBuilder()
    b.call("j1", 1.5, 1.8)
    windowed(b, "network_toxic", 1.0, 2.0, healed={"toxic_bytes": None}, proxy="paidapi", type="latency")
    assert judge(b).valid is True and "1 paid call(s) went through it" in judge(b).message


def test_no_fault_at_all_is_unknown():
    assert judge(HistoryBuilder()).valid == UNKNOWN


def test_the_timeline_marks_where_each_fault_took_effect_or_did_not():
    from harness.checks import run_checks
    from harness.report.html import render_html

    b = HistoryBuilder()
    b.call("j1", 0.5, None, caller_pid=101)
    b.fault("kill_worker", 1.0, 2.0, details=WORKER)
    b.fault("hang_endpoint", 3.0, 4.0, layer="provider", job_id=None, route=None)
    verdict = run_checks([faults_landed], b.history(), None)
    html = render_html(b.history(), verdict, None, "t")
    assert "which held call call-1 of job j1" in html  # the effect, on the chart
    assert "no call was held (hung) while it was" in html  # the fault that did not land
    assert "fault took effect / did not" in html


def test_a_broker_outage_lands_when_the_app_logged_a_failed_publish_or_consume():
    b = HistoryBuilder()
    b.fault("broker_outage", 1.0, 2.0)
    assert judge(b).valid == UNKNOWN and "the app logged no failed publish" in judge(b).message
    b = HistoryBuilder()
    b.event("fault", "invoke", "inject", 1.0, fault="broker_outage", params={})
    b.event("fault", "ok", "inject", 1.0, fault="broker_outage", params={}, pid=5, port=6379)
    b.event("fault", "invoke", "heal", 2.0, fault="broker_outage", params={})
    b.event("fault", "ok", "heal", 2.1, fault="broker_outage", params={}, app_errors=2,
            app_error_lines=["worker1: consumer: Cannot connect to redis://127.0.0.1:6379/0"])
    assert judge(b).valid is True and "Cannot connect to redis" in judge(b).message


def test_holding_every_connection_slot_with_no_app_checkout_did_not_land():
    b = HistoryBuilder()
    b.fault("hold_database_connections", 1.0, 2.0)
    assert judge(b).valid == UNKNOWN and "no refused or timed-out connection checkout" in judge(b).message


def test_a_proxy_down_lands_only_when_the_app_was_refused():
    b = HistoryBuilder()
    b.fault("proxy_down", 1.0, 2.0, proxy="paidapi")
    assert judge(b).valid == UNKNOWN and "logged no refused connection" in judge(b).message


def test_a_poison_job_row_lands_when_the_app_changes_its_state():
    b = HistoryBuilder()
    b.fault("poison_row", 1.0, 5.0, details={"row": {"channel": "fax"}, "inserted": {"ticket_no": 9},
                                             "job_id": "9"}, table="tickets")
    b.state("8", 2.0, "failed")  # another job's change is no evidence about this row
    assert judge(b).valid == UNKNOWN
    b.state("9", 3.0, "failed")
    result = judge(b)
    assert result.valid is True and "changed job 9 to 'failed'" in result.message


def test_a_defence_switched_off_lands_when_it_stayed_frozen_until_the_heal():
    frozen = {"pid": 9, "tree": [9], "role": "app"}
    b = HistoryBuilder()
    windowed(b, "pause_service", 1.0, 2.0, frozen, {"frozen_until_heal": True}, service="sweeper",
             defence_off=True)
    result = judge(b)
    assert result.valid is True and "a defence switched off: it stayed frozen until the heal" in result.message
    b = HistoryBuilder()
    windowed(b, "pause_service", 1.0, 2.0, frozen, {"frozen_until_heal": False}, service="sweeper",
             defence_off=True)
    result = judge(b)
    assert result.valid == UNKNOWN and "not frozen any more at the heal" in result.message
