"""The pytest plugin: options, markers and fixtures only; state lives in ``harness.session``."""
from __future__ import annotations

from typing import Iterator

import pytest

from harness.config import OPTIONS

SESSION_KEY = "jobquake-session"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("jobquake", "jobquake chaos harness")
    for opt in OPTIONS:
        if not opt.scalar:
            continue
        flag = "--jobquake-" + opt.key.replace("_", "-")
        group.addoption(flag, dest=f"jobquake_{opt.key}", default=None, help=opt.help)
        parser.addini(f"jobquake_{opt.key}", opt.help, default=None)
    group.addoption("--jobquake-list-catches", dest="jobquake_list_catches", default=None, metavar="PATH",
                    help="write which mutants each collected scenario catches (JSON) and stop")
    from harness.nightly.pytest_entry import add_options

    add_options(group)  # --jobquake-nightly=DURATION: a nightly run as one test


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "jobquake(checks=..., skip_checks=..., settle=True, options=..., "
                            "expect_paid_calls=None, expect_jobs=None, replicas=None): choose the invariants "
                            "checked after this scenario (and declare one that makes no paid call / no job; "
                            "replicas={process: n} runs n of an app process for it)")
    config.addinivalue_line("markers", "catches(mutant, invariant): this scenario is written to catch "
                            "that mutant, failing that invariant (see `jobquake mutants`)")
    from harness.errors import ConfigError
    from harness.markers import MarkerCheck
    from harness.session import JobquakeSession

    try:
        session = JobquakeSession(config)
    except ConfigError as exc:  # a usage error (key, source, fix), not an INTERNALERROR
        raise pytest.UsageError(f"jobquake: {exc}") from None
    config.pluginmanager.register(session, SESSION_KEY)
    from harness.session_artifacts import SessionArtifacts

    config.pluginmanager.register(SessionArtifacts(config), "jobquake-session-artifacts")  # xdist: one folder
    from harness.start_failure import StartFailureReport

    config.pluginmanager.register(StartFailureReport(), "jobquake-start-failure")  # told once, not per test
    config.pluginmanager.register(MarkerCheck(session.settings.mutants, config.rootpath), "jobquake-markers")
    from harness.nightly.pytest_entry import NightlyCollector

    config.pluginmanager.register(NightlyCollector(), "jobquake-nightly")
    import os

    from harness.mutation_reach import ENV_VAR, WindowRecorder

    if os.environ.get(ENV_VAR):  # ``mutants --full``'s baseline: which test ran when, for the app's reach lines
        config.pluginmanager.register(WindowRecorder(os.environ[ENV_VAR]), "jobquake-reach-windows")


def _session(config: pytest.Config):
    return config.pluginmanager.get_plugin(SESSION_KEY)


@pytest.fixture(scope="session")
def jq_config(pytestconfig: pytest.Config):
    """The effective jobquake configuration."""
    return _session(pytestconfig).settings


@pytest.fixture(scope="session")
def jq_stack(pytestconfig: pytest.Config):
    """Every service, started once per session (per xdist worker) and stopped at its end."""
    session = _session(pytestconfig)
    yield session.stack()
    session.stop_stack()


@pytest.fixture
def jq(request: pytest.FixtureRequest, jq_stack) -> Iterator[object]:
    """The per-test handle: a reset stack, the history, the faults, the verdict at teardown."""
    run = _session(request.config).begin(request.node, jq_stack)
    yield run
    _session(request.config).finish(request.node, run)
