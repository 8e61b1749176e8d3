"""``python -m refapp.api --port P``: the HTTP API (aiohttp, on 127.0.0.1).

``POST /jobs`` does the fast checks, saves the job and its outbox message in
one transaction and answers 202 with the job id; the work happens in a
worker. ``GET /jobs/{id}`` is the truth (the database); ``GET
/jobs/{id}/events`` and ``GET /events`` stream state changes as server-sent
events, relayed from the Redis channel workers publish on after each commit
and caught up from the database (``sse``). Database work runs in threads,
off the event loop.
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from aiohttp import web
from sqlalchemy.exc import SQLAlchemyError

from refapp import budgets, jobstatus, logs, settings, sse, submit
from refapp.celery_app import TASK_SWEEP_OVERDUE, get_app
from refapp.event_hub import EventHub
from refapp.mutants import mutant

log = logging.getLogger("refapp.api")

HUB = web.AppKey("hub", EventHub)
STREAMS = web.AppKey("streams", set)  # handler tasks of open event streams
SAVES = web.AppKey("saves", set)  # saves under way (also those the request stopped waiting for)
CONFIG = web.AppKey("config", settings.Settings)


def make_app(config: settings.Settings) -> web.Application:
    """The aiohttp application."""
    app = web.Application(client_max_size=config.max_upload_bytes)
    app[CONFIG] = config
    app[HUB] = EventHub(config.events_url)
    app[STREAMS] = set()
    app[SAVES] = set()
    app.on_startup.append(lambda a: a[HUB].start())
    app.on_shutdown.append(_close_streams)
    app.on_cleanup.append(lambda a: a[HUB].stop())
    app.add_routes([
        web.post("/jobs", post_job),
        web.get("/jobs/{id}", get_job),
        web.post("/jobs/{id}/cancel", cancel_job),
        web.get("/jobs/{id}/events", job_events),
        web.get("/events", all_events),
        web.post("/sweeps/overdue", start_sweep),
        web.get("/health", health),
    ])
    return app


async def _close_streams(app: web.Application) -> None:
    """An event stream never ends by itself: end each one, or shutdown waits for them all."""
    for task in list(app[STREAMS]):
        task.cancel()


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


async def post_job(request: web.Request) -> web.Response:
    """Accept an upload: 202 with the job id (the same id for the same upload)."""
    try:
        body = await request.json()
    except ValueError:
        return _error(400, "the body is not JSON")
    try:
        sub = submit.check(body, request.app[CONFIG])
    except submit.Rejected as exc:
        return _error(exc.status, exc.message)
    if mutant("submit-acks-before-save"):
        return _answer_then_save(request.app, sub)
    return await _save(request.app, sub)


NOT_SAVED = "the job could not be saved; nothing was accepted, try again"


async def _save(app: web.Application, sub: submit.Submission) -> web.Response:
    """Save within ``submit_deadline`` and answer what the database holds: 202 only once it is committed,
    503 only when nothing is (a save given up on at the deadline may no longer commit)."""
    window = submit.SaveWindow()
    saving = asyncio.ensure_future(asyncio.to_thread(submit.submit, sub, window))
    app[SAVES].add(saving)
    saving.add_done_callback(_forget_save(app))
    try:
        job_id, created = await asyncio.wait_for(asyncio.shield(saving), budgets.scaled("submit_deadline"))
    except TimeoutError:
        # mutant submit-timeout-keeps-saving: the answer says "not accepted" and the save goes on to commit
        if mutant("submit-timeout-keeps-saving") or window.abandon():
            log.error("submission not saved within %gs; told the user to try again",
                      budgets.scaled("submit_deadline"))
            return _error(503, "the job could not be saved in time; nothing was accepted, try again")
        return await _committed(saving, sub, window)  # the commit had begun: its outcome is the answer
    except SQLAlchemyError as exc:
        return await _after_error(exc, sub, window)
    return web.json_response({"job_id": job_id, "created": created}, status=202)


async def _committed(saving: asyncio.Future, sub: submit.Submission, window: submit.SaveWindow) -> web.Response:
    try:
        job_id, created = await saving
    except SQLAlchemyError as exc:
        return await _after_error(exc, sub, window)
    return web.json_response({"job_id": job_id, "created": created}, status=202)


async def _after_error(exc: SQLAlchemyError, sub: submit.Submission, window: submit.SaveWindow) -> web.Response:
    """The save raised. Before its COMMIT nothing is saved; at or after it, only the database can tell."""
    if not window.committing or mutant("commit-error-answered-refused"):
        # (mutant: an error at the commit is taken for "not saved", though the commit may have taken)
        log.error("submission not saved: %s", exc)
        return _error(503, NOT_SAVED)
    job_id = submit.job_id_for(sub.project, sub.file)
    try:
        found = await asyncio.to_thread(jobstatus.describe, job_id)
    except SQLAlchemyError as again:
        log.error("submission %s: the commit failed (%s) and its outcome cannot be read (%s)", job_id, exc, again)
        return _error(503, f"the job may or may not be saved; GET /jobs/{job_id} tells, or try again")
    if found is None:
        log.error("submission not saved: %s", exc)
        return _error(503, NOT_SAVED)
    log.warning("submission %s: the commit reported %s, but the job is saved", job_id, type(exc).__name__)
    return web.json_response({"job_id": job_id, "created": None}, status=202)


ROLLED_BACK = "rolled back"  # logged when a save the request gave up on ends without committing


def _forget_save(app: web.Application):
    def forget(task: asyncio.Future) -> None:
        app[SAVES].discard(task)
        error = None if task.cancelled() else task.exception()  # retrieved: never an unhandled error
        if isinstance(error, submit.SaveAbandoned):
            log.warning("%s: %s", ROLLED_BACK, error)
    return forget


def _answer_then_save(app: web.Application, sub: submit.Submission) -> web.Response:
    """The ``submit-acks-before-save`` mutant: answer at once, save in the background."""
    async def save() -> None:
        try:
            await asyncio.to_thread(submit.submit, sub)
        except SQLAlchemyError:  # the wrong shape: the user was already told "accepted"
            log.exception("job %s accepted but not saved", job_id)

    job_id = submit.job_id_for(sub.project, sub.file)
    task = asyncio.create_task(save())
    app[SAVES].add(task)
    task.add_done_callback(app[SAVES].discard)
    return web.json_response({"job_id": job_id, "created": True}, status=202)


async def get_job(request: web.Request) -> web.Response:
    """The job's state as the database has it."""
    found = await asyncio.to_thread(jobstatus.describe, request.match_info["id"])
    return web.json_response(found) if found else _error(404, "no such job")


async def cancel_job(request: web.Request) -> web.Response:
    """Ask a job to stop: a queued job fails at once, a running one at its next check."""
    state = await asyncio.to_thread(jobstatus.request_cancel, request.match_info["id"])
    if state is None:
        return _error(404, "no such job")
    return web.json_response({"state": state}, status=202)


async def start_sweep(request: web.Request) -> web.Response:
    """Run the overdue-invoice sweep now (it also runs on its schedule)."""
    await asyncio.to_thread(get_app().send_task, TASK_SWEEP_OVERDUE)
    return web.json_response({"queued": TASK_SWEEP_OVERDUE}, status=202)


async def health(request: web.Request) -> web.Response:
    """Liveness: the server answers."""
    return web.json_response({"ok": True})


async def job_events(request: web.Request) -> web.StreamResponse:
    """Server-sent events of one job: its current state, then each change, until it is terminal."""
    return await _stream(request, request.match_info["id"])


async def all_events(request: web.Request) -> web.StreamResponse:
    """Server-sent events of every job (``Last-Event-ID``: first every change since that moment)."""
    return await _stream(request, None)


async def _stream(request: web.Request, job_id: str | None) -> web.StreamResponse:
    request.app[STREAMS].add(asyncio.current_task())
    try:
        return await sse.serve(request, request.app[HUB], job_id)
    finally:
        request.app[STREAMS].discard(asyncio.current_task())


def main(argv: list[str] | None = None) -> int:
    """Serve on 127.0.0.1 until SIGTERM / SIGINT."""
    parser = argparse.ArgumentParser(prog="python -m refapp.api")
    parser.add_argument("--port", type=int, default=None, help="default: REFAPP_PORT")
    args = parser.parse_args(argv)
    logs.setup("api")
    config = settings.for_process()
    port = args.port or config.port
    web.run_app(make_app(config), host="127.0.0.1", port=port, access_log=None,
                print=lambda _banner: log.info("api ready on http://127.0.0.1:%d", port))
    return 0


if __name__ == "__main__":
    sys.exit(main())
