"""A Django process for tests/integration/test_instrument_django.py, started with the instrumentation.

``python django_child.py DSN POOL STEP...``: Django set up on DSN (with a
psycopg pool of 2 when POOL is ``pool``), then each step in order; prints
one JSON line of what it saw.
"""
import json
import sys

import django
import psycopg
from django.conf import settings
from django.db import OperationalError, connection, transaction

from harness._wait import wait_until
from harness.failpoints import register_callback
from harness.stack.database_values import database_values

dsn, pool, steps = sys.argv[1], sys.argv[2] == "pool", sys.argv[3:]
parts = database_values(dsn)  # as an app's settings get them: {database_host} is the socket's folder
database = {"ENGINE": "django.db.backends.postgresql", "NAME": parts["database_name"], "USER": parts["database_user"],
            "PASSWORD": parts["database_password"], "HOST": parts["database_host"],
            "PORT": str(parts["database_port"])}
if pool:
    database["OPTIONS"] = {"pool": {"min_size": 1, "max_size": 2, "timeout": 0.5}}
elif sys.argv[2] == "persistent":
    database["CONN_MAX_AGE"] = 60
settings.configure(DATABASES={"default": database}, USE_TZ=True)
django.setup()
seen: dict = {"notes": [], "errors": []}


def visible_rows() -> int:
    """What another session sees of the table: committed rows only."""
    with psycopg.connect(dsn, autocommit=True) as other:
        return other.execute("SELECT count(*) FROM child_rows").fetchone()[0]


register_callback("note", lambda context, where: seen["notes"].append((where, visible_rows())))


def query_one(text: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(text)
        return cursor.fetchone()[0]


def query() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM child_rows")
        return cursor.fetchone()[0]


def _try(fn):
    try:
        return fn() + 1  # truthy even for 0 rows
    except OperationalError:
        return None


for step in steps:
    if step == "create":
        with connection.cursor() as cursor:
            cursor.execute("CREATE TABLE IF NOT EXISTS child_rows (id serial PRIMARY KEY)")
    elif step == "write":
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("INSERT INTO child_rows DEFAULT VALUES")
            transaction.on_commit(lambda: seen["notes"].append(("callback", visible_rows())))
    elif step == "write-autocommit":  # no transaction: Django runs an on_commit callback at once
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO child_rows DEFAULT VALUES")
        transaction.on_commit(lambda: seen["notes"].append(("callback", visible_rows())))
    elif step == "insert-returning":  # autocommit, as Model.save() with a serial key: the id read after
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO child_rows DEFAULT VALUES RETURNING id")
            seen["notes"].append(("inserted", cursor.fetchone()[0]))
    elif step == "query":
        try:
            seen["notes"].append(("query", query()))
        except OperationalError as exc:
            seen["errors"].append(str(exc).splitlines()[0])
    elif step.startswith("as-run:"):  # what a Celery task run of job 1 would be (the instrumentation's context)
        from harness.instrument import _context

        _, run, attempt, write = step.split(":")
        _context.enter(_context.JobContext("1", int(attempt), "child.task", run))
        with connection.cursor() as cursor:  # autocommit, as a plain Model.objects.filter().update()
            if write == "claim":
                cursor.execute("UPDATE child_jobs SET attempt = attempt + 1, state = 'running' WHERE id = 1")
            else:
                with transaction.atomic():
                    cursor.execute("UPDATE child_jobs SET state = %s WHERE id = 1", [write])
        _context.leave()
    elif step == "server-restarted":  # the harness replaced the database: this session is cut
        pid = query_one("SELECT pg_backend_pid()")
        with psycopg.connect(dsn, autocommit=True) as other:
            other.execute("SELECT pg_terminate_backend(%s)", (pid,))
        connection.close_if_unusable_or_obsolete()  # what Django does at a request's start and end
    elif step == "query-again":  # once the harness let go of what it held
        seen["notes"].append(("query", wait_until(lambda: _try(query), timeout=20, what="a connection again") - 1))
print(json.dumps(seen))
