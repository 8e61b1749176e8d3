"""The submitting process's side of AppClient.submit: how the app's own submit function is called."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from harness.appclient import RESULT_MARK, RUNNER

APP = '''
import asyncio
from pydantic import BaseModel

CLOSED = []


class Session:
    def close(self):
        CLOSED.append(self)
        print("session closed", flush=True)


def session_factory():
    return Session()


def get_db():  # a FastAPI dependency: the session lives for the request, ended by the dependency itself
    session = Session()
    try:
        yield session
    finally:
        print("dependency finished", flush=True)
        session.close()


class Body(BaseModel):
    title: str
    pages: int = 1


class Row:
    def __init__(self, title):
        self.id = f"row-{title}"


def service(db: Session, body: Body) -> Row:
    assert isinstance(db, Session) and isinstance(body, Body)
    return Row(body.title)


def handler(body: Body, db=None) -> dict:
    return {"recap_id": f"dict-{body.title}", "status": "pending"}


async def coroutine(title: str) -> str:
    await asyncio.sleep(0)
    return f"async-{title}"
'''


def _submit(tmp_path, spec: str, args: dict, session: str = "", column: str = "id") -> tuple[object, str]:
    (tmp_path / "app.py").write_text(textwrap.dedent(APP))
    done = subprocess.run([sys.executable, "-c", RUNNER, spec, json.dumps(args), session, column, RESULT_MARK],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    marked = [line for line in done.stdout.splitlines() if line.startswith(RESULT_MARK)]
    return json.loads(marked[-1][len(RESULT_MARK):]), done.stdout


def test_a_service_taking_a_session_and_a_pydantic_body_returns_an_orm_object(tmp_path):
    job_id, out = _submit(tmp_path, "app:service", {"body": {"title": "t1"}}, session="app:session_factory")
    assert job_id == "row-t1" and "session closed" in out  # the session from the app's factory, closed after


def test_a_handler_returning_a_dict_gives_the_id_column(tmp_path):
    job_id, _ = _submit(tmp_path, "app:handler", {"body": {"title": "t2"}}, column="recap_id")
    assert job_id == "dict-t2"


def test_a_coroutine_function_is_run_to_its_end(tmp_path):
    assert _submit(tmp_path, "app:coroutine", {"title": "t3"})[0] == "async-t3"


def test_a_dependency_that_yields_a_session_is_run_to_its_end_after_the_call(tmp_path):
    job_id, out = _submit(tmp_path, "app:service", {"body": {"title": "t4"}}, session="app:get_db")
    assert job_id == "row-t4"
    assert out.index("dependency finished") < out.index("session closed")  # the dependency's own ending
