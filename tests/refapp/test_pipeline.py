"""A job through the whole system: API, outbox, relay, Celery worker, paid API, database, events."""
from __future__ import annotations

import json
import re
import threading

import httpx
import sqlalchemy as sa

from harness._wait import wait_until
from refapp import budgets, celery_app, db, dispatch, submit
from refapp.failpoints import TASK_BEFORE_FINAL_WRITE
from tests.refapp.conftest import SCALE, Stack, quiet_job


def _items(job_id: str) -> list[dict]:
    with db.engine().connect() as conn:
        rows = conn.execute(sa.select(db.items).where(db.items.c.job_id == job_id).order_by(db.items.c.idx))
        return [dict(r) for r in rows.mappings()]


def test_documents_job_runs_to_done(stack: Stack) -> None:
    response = stack.submit(project="p-done", file="a.pdf", documents=["Invoice 12", "Dear Sir", "Quarterly report"])
    assert response.status_code == 202, response.text
    job_id = response.json()["job_id"]

    job = stack.wait_terminal(job_id)

    assert (job["state"], job["reason"], job["items_done"], job["items_failed"]) == ("done", None, 3, 0)
    assert all(item["state"] == "done" and item["result"] for item in _items(job_id))
    calls = stack.ledger(job_id=job_id)
    assert sorted(c["step"] for c in calls) == ["doc-0.categorise", "doc-1.categorise", "doc-2.categorise"]
    assert {c["attempt"] for c in calls} == {1}


def test_a_failing_document_does_not_stop_the_batch(stack: Stack) -> None:
    job_id = submit.job_id_for("p-isolation", "batch.pdf")
    stack.paid_mode(mode="fail", job_id=job_id, status=500, count=1)  # only the first call fails

    stack.submit(project="p-isolation", file="batch.pdf", documents=["one", "two", "three", "four"])
    job = stack.wait_terminal(job_id)

    assert job["state"] == "failed"
    assert job["reason"].startswith("error: provider returned 500")
    assert job["reason"].endswith("(1 of 4 documents failed)")
    assert [i["state"] for i in _items(job_id)] == ["failed", "done", "done", "done"]


def test_a_bad_csv_row_is_counted_and_the_import_goes_on(stack: Stack) -> None:
    csv_text = "date,amount,description\n2024-01-05,12.50,Office paper invoice\n2024-01-06,abc,Coffee\n" \
               "2024-01-07,-3.00,Refund receipt\n"

    response = stack.submit(project="p-import", file="bank.csv", kind="import", csv=csv_text)
    job = stack.wait_terminal(response.json()["job_id"])

    assert job["state"] == "failed"
    assert job["reason"] == "error: row 2: amount 'abc' is not a number (1 of 3 rows failed)"
    with db.engine().connect() as conn:
        booked = conn.execute(sa.select(db.ledger_entries.c.row_no, db.ledger_entries.c.category)
                              .where(db.ledger_entries.c.job_id == job["id"]).order_by("row_no")).all()
    assert [tuple(r) for r in booked] == [(0, "invoice"), (2, "receipt")]


def test_the_soft_limit_finalises_the_job_with_how_far_it_got(stack: Stack) -> None:
    job_id = submit.job_id_for("p-soft", "long.pdf")
    # 12 calls of 80 s (0.4 s at the test scale) need 4.8 s; the batch budget is 600 s (3 s)
    stack.paid_mode(mode="slow", job_id=job_id, seconds=80)

    stack.submit(project="p-soft", file="long.pdf", documents=[f"page {n}" for n in range(12)])
    job = stack.wait_terminal(job_id, timeout=budgets.scaled_hard("task:default") + 5)

    assert job["state"] == "failed"
    match = re.fullmatch(r"timeout: timed out after (\d+) of 12 documents \(batch budget 3s\)", job["reason"])
    assert match, job["reason"]
    assert 0 < int(match.group(1)) < 12
    elapsed = (job["finished_at"] - job["started_at"]).total_seconds()
    # started_at is the claim, a little after Celery started the clock
    assert budgets.scaled("task:default") - 0.25 <= elapsed < budgets.scaled_hard("task:default")


def test_a_repeated_attempt_sends_the_same_idempotency_keys_and_is_billed_once(stack: Stack) -> None:
    response = stack.submit(project="p-keys", file="twice.pdf", documents=["alpha", "beta"])
    job_id = response.json()["job_id"]
    assert stack.wait_terminal(job_id)["state"] == "done"
    _forget_saved_results(job_id)  # as if the worker died after paying, before saving

    dispatch.send("celery", {"job_id": job_id, "dispatch": 2})
    job = stack.wait_terminal(job_id)

    assert (job["state"], job["attempt"]) == ("done", 2)
    calls = stack.ledger(job_id=job_id)
    for step in ("doc-0.categorise", "doc-1.categorise"):
        mine = [c for c in calls if c["step"] == step]
        assert [c["attempt"] for c in mine] == [1, 2]
        assert len({c["key"] for c in mine}) == 1
        assert [c["billed"] for c in mine] == [True, False]


def _forget_saved_results(job_id: str) -> None:
    with db.engine().begin() as conn:
        conn.execute(sa.delete(db.step_results).where(db.step_results.c.job_id == job_id))
        conn.execute(sa.update(db.items).where(db.items.c.job_id == job_id).values(state="pending", result=None))
        conn.execute(sa.update(db.jobs).where(db.jobs.c.id == job_id).values(state="queued", reason=None))


def test_status_events_follow_the_commit(stack: Stack) -> None:
    job_id = quiet_job("events.pdf", ["first", "second"])
    stack.failpoints.arm(TASK_BEFORE_FINAL_WRITE, "sleep", seconds=0.3)  # widen the commit window
    seen: list[tuple[dict, str | None]] = []
    reader = threading.Thread(target=_read_events, args=(stack, job_id, seen), daemon=True)
    reader.start()
    wait_until(lambda: seen, timeout=10, what="the snapshot event")

    dispatch.send("celery", {"job_id": job_id, "dispatch": 1})
    reader.join(timeout=15)

    states = [event["state"] for event, _ in seen]
    assert states == ["queued", "running", "done"]
    for event, db_state in seen:  # the database already said so when the event arrived
        assert db_state == event["state"]
    assert stack.job(job_id)["state"] == "done"


def _read_events(stack: Stack, job_id: str, seen: list) -> None:
    with httpx.stream("GET", f"{stack.api_url}/jobs/{job_id}/events", timeout=15) as response:
        for line in response.iter_lines():
            if line.startswith("data: "):
                event = json.loads(line[len("data: "):])
                seen.append((event, stack.job(job_id)["state"]))


def test_every_task_runs_on_the_budget_it_declares(stack: Stack) -> None:
    inspect = celery_app.get_app().control.inspect(timeout=5, limit=1)  # one worker: stop at its reply

    registered = wait_until(lambda: inspect.registered("soft_time_limit", "time_limit"), timeout=10,
                            what="the worker's task list")
    (tasks,) = registered.values()
    effective = {}
    for line in tasks:
        name, _, attrs = line.partition(" ")
        limits = dict(pair.split("=") for pair in attrs.strip("[]").split())
        effective[name] = {"soft": float(limits["soft_time_limit"]), "hard": float(limits["time_limit"])}
    assert effective == budgets.declared_budgets(SCALE)
    (stats,) = inspect.stats().values()
    assert stats["pool"]["timeouts"] == [0, 0]  # no worker-wide budget nobody chose
