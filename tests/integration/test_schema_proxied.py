"""With ``proxied`` listing postgres, the app's schema reaches the template database as the app reaches
its own: by the fault proxy's TCP address, so settings that build their URL from a host and a port work."""
from __future__ import annotations

import dataclasses
import textwrap

import psycopg
import pytest

from harness.config import resolve
from harness.stack import reaper
from harness.stack.stack import Stack
from tests.common.tiny import TINYAPP

pytestmark = pytest.mark.integration

# full-stack-fastapi-template's way: pydantic builds the URL from the parts (a socket folder is no host)
SCHEMA = textwrap.dedent("""
    import os, sys
    from pydantic import PostgresDsn
    import tinyapp

    url = PostgresDsn.build(scheme="postgresql+psycopg", username=os.environ["PG_USER"],
                            password=os.environ["PG_PASSWORD"], host=os.environ["PG_SERVER"],
                            port=int(os.environ["PG_PORT"]), path=os.environ["PG_DB"])
    assert sys.argv[1:] == [os.environ["PG_SERVER"], os.environ["PG_PORT"]], sys.argv  # the command's own values
    tinyapp.create_schema(str(url))
    print("schema by", url.hosts()[0]["host"], url.hosts()[0]["port"])
""")
PARTS = {"PG_SERVER": "{database_host}", "PG_PORT": "{database_port}", "PG_DB": "{database_name}",
         "PG_USER": "{database_user}", "PG_PASSWORD": "{database_password}"}


def test_a_schema_command_building_its_url_from_host_and_port_runs_through_the_proxy(tmp_path):
    script = tmp_path / "schema_by_parts.py"
    script.write_text(SCHEMA)
    base = resolve(cli={"proxied": "paidapi,postgres", "workers": 0}, environ={}, pyproject=TINYAPP / "pyproject.toml")
    config = dataclasses.replace(base, schema=f"python {script} {{database_host}} {{database_port}}",
                                 env={**base.env, **PARTS})
    with Stack(config, reaper.run_dir() / "tiny-schema-proxied") as stack:
        assert stack.values["database_host"] == "127.0.0.1"
        assert stack.values["database_port"] == stack.proxy_ports["postgres"]
        with psycopg.connect(stack.postgres.dsn, autocommit=True) as conn:  # the harness's own: the socket
            assert conn.execute("SELECT count(*) FROM jobs").fetchone() == (0,)  # the copy of the template
        assert stack.postgres.dsn.startswith("postgresql://postgres:") and "?host=/" in stack.postgres.dsn
