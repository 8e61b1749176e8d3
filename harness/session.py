"""The plugin's state for one pytest process: the resolved config, the stack, the verdicts.

Hooks and the stack's life only: turning a run into its verdict is ``harness.verdict``'s.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness import config as cfg
from harness import markers
from harness._signals import QUICK_STOP, StopOnSignal
from harness.checks import Verdict
from harness.checks.failure import failure_text
from harness.errors import ConfigError, HarnessError, SettleTimeout
from harness.report import junit_properties
from harness.report.junit import PREFIX as JUNIT_PREFIX
from harness.run import Run, artifacts_dir_for
from harness.session_artifacts import artifacts_folder, make_artifacts_folder
from harness.start_failure import did_not_start
from harness.stack import reaper
from harness.stack.stack import Stack
from harness.verdict import Verdicts

VERDICT_KEY = pytest.StashKey[Verdict]()
WORKER_VERDICTS = "jobquake_verdicts"  # key of a worker's verdicts in xdist's workeroutput


class JobquakeSession:
    """Registered in ``pytest_configure``; fixtures and hooks delegate here."""

    def __init__(self, config: pytest.Config):
        self.pytest_config = config
        cli = {o.key: config.getoption(f"jobquake_{o.key}") for o in cfg.OPTIONS if o.scalar}
        ini = {o.key: config.getini(f"jobquake_{o.key}") for o in cfg.OPTIONS if o.scalar}
        pyproject = config.rootpath / "pyproject.toml"
        self.settings = cfg.resolve(cli=cli, ini=ini, pyproject=pyproject if pyproject.is_file() else None)
        self.signals = StopOnSignal().install()  # SIGTERM / SIGHUP clean up as Ctrl-C does
        self._stack: Stack | None = None
        self._run: Run | None = None
        self.judged = Verdicts(seed=self.settings.seed, on_unknown=self.settings.on_unknown)

    @property
    def verdicts(self) -> dict[str, Verdict]:
        """Every test's verdict so far (an xdist controller's: every worker's too), by node id."""
        return self.judged.by_test

    @property
    def artifacts_root(self) -> Path:
        """This session's own folder under the artifacts folder (made by ``stack()``)."""
        root = Path(self.settings.artifacts)
        return artifacts_folder(self.pytest_config, root if root.is_absolute() else self.pytest_config.rootpath / root)

    # -- hooks ---------------------------------------------------------------------
    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        s = self.settings
        return [f"jobquake: backend={s.backend} seed={s.seed} time_scale={s.time_scale} "
                f"artifacts={self.artifacts_root}"]

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):
        report = yield
        if call.excinfo is not None and report.failed:
            text = failure_text(call.excinfo.value)
            if text is not None:  # the verdict, as Hypothesis shows a falsifying example: no plugin frames
                report.longrepr = text
        return report

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item):
        __tracebackhide__ = True
        run = getattr(item, "funcargs", {}).get("jq")
        if not isinstance(run, Run):
            return (yield)
        try:
            result = yield
        except KeyboardInterrupt:
            raise  # the run is stopping: no verdict, the stack stops at once
        except (pytest.skip.Exception, pytest.xfail.Exception):
            # the scenario itself said it cannot be judged here: no verdict (the jq fixture's teardown still
            # heals and removes what it left); JUnit readers see why its invariants are missing
            item.user_properties.append((f"{JUNIT_PREFIX}.verdict", "skipped"))
            raise
        except SettleTimeout as timeout:
            # the scenario's own settle gave up: the verdict says why (a stuck job names its invariant)
            error = self._judge(item, run, settle=False)
            if error is not None:
                raise error from timeout
            raise
        except BaseException:
            self._judge(item, run, settle=False)  # keep the evidence of a scenario that broke
            raise
        error = self._judge(item, run, settle=True)
        if error is not None:
            raise error
        return result

    def _judge(self, item: pytest.Item, run: Run, *, settle: bool) -> BaseException | None:
        """The verdict of ``item``'s run, kept where pytest reports it; the exception that fails the test."""
        marker = item.get_closest_marker("jobquake")
        opts = markers.ScenarioOptions.from_kwargs(marker.kwargs if marker else {})
        judgement = self.judged.judge(run, item.nodeid, opts, settle=settle)
        item.stash[VERDICT_KEY] = judgement.verdict
        item.user_properties.extend(junit_properties(judgement.verdict, self.settings.seed, run.artifacts))
        return judgement.error

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        path = self.pytest_config.getoption("jobquake_list_catches")
        if path:
            from harness.mutation import write_catches

            if not session.testsfailed:  # a file that did not collect would drop its catches unseen
                write_catches(path, session.items)
            session.items.clear()  # listing only: run nothing

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.verdicts:
            return
        from harness.report import summary_lines

        terminalreporter.section("jobquake invariants")
        for line in summary_lines(self.verdicts):
            terminalreporter.write_line(line)
        terminalreporter.write_line(f"artifacts: {self.artifacts_root}   replay: --jobquake-seed={self.settings.seed}")

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(self.pytest_config, "workerinput"):  # an xdist worker: its controller reports
            # through JSON: execnet carries plain values only
            self.pytest_config.workeroutput[WORKER_VERDICTS] = json.loads(json.dumps(
                {k: v.to_dict() for k, v in self.verdicts.items()}, default=str))
            return
        if self.verdicts:
            from harness.report import write_json

            for stale in self.artifacts_root.glob("run-gw*.json"):  # per-worker files of older versions
                stale.unlink(missing_ok=True)
            write_json(self.artifacts_root / "run.json", self.verdicts, meta={"seed": self.settings.seed})

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """xdist: gather a worker's verdicts, so the table and run.json are those of a serial run."""
        raw = getattr(node, "workeroutput", {}).get(WORKER_VERDICTS) or {}
        self.judged.by_test.update({nodeid: Verdict.from_dict(v) for nodeid, v in raw.items()})

    # -- stack lifecycle -----------------------------------------------------------
    def stack(self) -> Stack:
        if self._stack is None:
            stack = None
            try:
                reaper.reap()  # what a killed earlier run left behind
                make_artifacts_folder(self.pytest_config, self.artifacts_root.parent)  # or refused, before anything starts
                stack = Stack(self.settings, reaper.run_dir() / "stack", on_worker_event=self._worker_event)
                stack.start()  # stops what it started if it fails
            except ConfigError as exc:
                reaper.remove_run_dir()
                pytest.exit(f"jobquake: {exc}", returncode=pytest.ExitCode.USAGE_ERROR)
            except (HarnessError, ExceptionGroup) as exc:  # told once, in one paragraph (start_failure.py)
                failed = did_not_start(exc, stack, self.artifacts_root)
                reaper.remove_run_dir()  # nothing of a failed start stays, the in-memory cluster included
                raise failed from None
            except BaseException:
                reaper.remove_run_dir()
                raise
            self._stack = stack
        return self._stack

    def stop_stack(self) -> None:
        if self._stack is not None:
            # a signal during this stop interrupts it; pytest_unconfigure then stops the rest
            self._stack.stop(QUICK_STOP if self.signals.stopping else None)
            self._stack = None
            reaper.remove_run_dir()

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.stop_stack()  # a session cut short before its fixtures were torn down
        self.signals.uninstall()

    def _worker_event(self, name: str, worker: Any, data: dict) -> None:
        if self._run is not None:
            self._run.record.worker(name, **data)

    def begin(self, node: pytest.Item, stack: Stack) -> Run:
        stack.reset()
        marker = node.get_closest_marker("jobquake")
        stack.scale(markers.ScenarioOptions.from_kwargs(marker.kwargs if marker else {}).replicas)
        self._run = Run(stack, self.settings, artifacts_dir_for(self.artifacts_root, node.nodeid), node.nodeid)
        return self._run

    def finish(self, node: pytest.Item, run: Run) -> None:
        try:
            self.judged.finish(run)
        finally:
            self._run = None
