"""Config of the instrumentation, and the environment the stack gives each app process."""
from __future__ import annotations

import pytest

from harness._ports import release_port
from harness.config import resolve
from harness.errors import ConfigError
from harness.instrument import BOOT_DIR, ENV_DIR, ENV_JOB_ID_FROM, ENV_PAIDAPI_URL, ENV_PROCESS
from harness.stack.stack import Stack

PYPROJECT = """
[tool.jobquake]
worker_command = "celery -A app worker --pool prefork"
workers = 1
job_id_from = "job_id"

[tool.jobquake.env]
PYTHONPATH = "{root}/src"

[tool.jobquake.processes.api]
command = "python -m app.api --port {port}"

[tool.jobquake.processes.frontend]
command = "node server.js {port}"
instrument = false
"""


@pytest.fixture
def stack_for(tmp_path):
    """Build (never start) stacks of the project above; give back the ports they claimed."""
    built: list[Stack] = []

    def build(pyproject: str = PYPROJECT, **cli) -> Stack:
        (tmp_path / "pyproject.toml").write_text(pyproject)
        built.append(Stack(resolve(cli=cli, environ={}, pyproject=tmp_path / "pyproject.toml"), tmp_path / "run"))
        return built[-1]

    yield build
    for stack in built:
        ports = [svc.port for svc in stack.services()] + [*stack.proxy_ports.values(), *stack._app_ports.values()]
        for port in ports:
            if port:
                release_port(port)


def test_defaults():
    config = resolve(environ={}, pyproject=None)
    assert (config.instrument, config.job_id_from, config.job_updated_column) == (True, "", "")


@pytest.mark.parametrize("raw, value", [("false", False), ("0", False), ("yes", True), (True, True)])
def test_instrument_is_a_boolean(raw, value):
    assert resolve(cli={"instrument": raw}, environ={}, pyproject=None).instrument is value


def test_a_malformed_job_id_from_names_the_key_and_the_forms():
    with pytest.raises(ConfigError, match=r"invalid value 'args\[first\]' for 'JOBQUAKE_JOB_ID_FROM' "
                                          r"\(environment\): .* is none of '' \(the task id\), 'args\[N\]'"):
        resolve(environ={"JOBQUAKE_JOB_ID_FROM": "args[first]"}, pyproject=None)


def test_every_app_process_and_worker_gets_the_instrumentation_ahead_of_its_own_path(stack_for, tmp_path):
    stack = stack_for()
    for proc in (stack.processes["api"], stack.workers[0]):
        env = proc.extra_env
        assert env["PYTHONPATH"] == f"{BOOT_DIR}:{tmp_path}/src"
        assert (env[ENV_DIR], env[ENV_JOB_ID_FROM]) == (str(stack.instrument.path), "job_id")
        assert env[ENV_PAIDAPI_URL] == stack.values["paidapi_url"]
    assert (stack.processes["api"].extra_env[ENV_PROCESS], stack.workers[0].extra_env[ENV_PROCESS]) == (
        "api", "worker1")


def test_a_process_can_opt_out_and_so_can_the_whole_app(stack_for, tmp_path):
    frontend = stack_for().processes["frontend"].extra_env
    assert ENV_DIR not in frontend and frontend["PYTHONPATH"] == f"{tmp_path}/src"
    stack = stack_for(instrument=False)
    assert stack.instrument is None and ENV_DIR not in stack.processes["api"].extra_env


def test_a_process_instrument_key_must_be_a_boolean(stack_for):
    with pytest.raises(ConfigError, match=r"processes.frontend.instrument: expected true or false, got 'no'"):
        stack_for(PYPROJECT.replace("instrument = false", 'instrument = "no"'))


def test_every_framework_failpoint_is_fired_and_documented():
    from pathlib import Path

    from harness.instrument import FAILPOINTS

    package = Path(BOOT_DIR).parent
    code = "".join(p.read_text() for p in package.glob("_*.py"))
    # the generated reference lists them; the explanation's hand-written table says what each adds
    docs = package.parent.parent / "docs"
    pages = [(docs / page).read_text() for page in ("reference/failpoints.md", "explanation/instrumentation.md")]
    for name in FAILPOINTS:
        assert f'fire("{name}"' in code, name
        assert all(f"| `{name}` |" in page for page in pages), name
