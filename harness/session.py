"""The plugin's state for one pytest process: the resolved config, the stack, the verdicts."""
from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from harness import config as cfg
from harness import markers
from harness._signals import QUICK_STOP, StopOnSignal
from harness.checks import Result, Verdict, run_checks, violation_error
from harness.checks.failure import failure_text, format_result
from harness.checks.generic import applicable, decided
from harness.checks.landed import faults_landed
from harness.checks.runner import checker_name
from harness.errors import ConfigError, HarnessError, SettleTimeout
from harness.isolation import isolate
from harness.leaks import created_jobs, leaked_to_later, no_work_from_earlier_tests, without_leaks
from harness.pending.verdict import settle_result
from harness.run import Run, artifacts_dir_for
from harness.stack import reaper
from harness.stack.stack import Stack

VERDICT_KEY = pytest.StashKey[Verdict]()
WORKER_VERDICTS = "jobquake_verdicts"  # key of a worker's verdicts in xdist's workeroutput


class UnknownVerdictWarning(UserWarning):
    """An invariant could not be decided and ``on_unknown = "warn"`` lets its test pass."""


class ScenarioError(HarnessError):
    """A scenario that cannot be judged as written (e.g. it runs no checker)."""


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
        self.verdicts: dict[str, Verdict] = {}
        self._created_by: dict[str, str] = {}  # job id -> the test that created it (leak reports)

    @property
    def artifacts_root(self) -> Path:
        root = Path(self.settings.artifacts)
        return root if root.is_absolute() else self.pytest_config.rootpath / root

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

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        path = self.pytest_config.getoption("jobquake_list_catches")
        if path:
            from harness.mutation import write_catches

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
        self.verdicts.update({nodeid: Verdict.from_dict(v) for nodeid, v in raw.items()})

    # -- the verdict ---------------------------------------------------------------
    def _judge(self, item: pytest.Item, run: Run, *, settle: bool) -> BaseException | None:
        run.faults.heal_all(before_verdict=True)  # heal, then check (Jepsen's final generator)
        marker = item.get_closest_marker("jobquake")
        opts = markers.ScenarioOptions.from_kwargs(marker.kwargs if marker else {})
        if settle and opts.settle is not False:
            bound = opts.settle if not isinstance(opts.settle, bool) else None
            try:
                run.settle(bound)
            except SettleTimeout:
                pass  # a result below (settled_before_verdict), with what was pending
        if opts.expect:
            run.expect(**opts.expect)
        history, snapshot = run._collect()
        leaks = no_work_from_earlier_tests(history, self._created_by)
        judged = without_leaks(history) if leaks.valid is False else history
        checkers = opts.checkers() + ([faults_landed] if run.faults.injected else [])  # each fault must land
        if not checkers:
            raise ScenarioError(f"{item.nodeid} runs no checker: nothing would be judged")
        generic = applicable(judged, snapshot, skip=opts.skip_checks, already=map(checker_name, checkers))
        verdict = run_checks(checkers + generic, judged, snapshot, opts.options)
        verdict = Verdict(tuple(decided(verdict.results, generic)), verdict.options)
        verdict = self._apart(item.nodeid, verdict, leaks, settle_result(run.settle_outcome))
        self._created_by.update(dict.fromkeys(created_jobs(history), item.nodeid))
        self._save(item, run, history, snapshot, verdict)
        unknown_fails = self.settings.on_unknown == "fail"
        if not unknown_fails:
            for result in verdict.unknown():
                warnings.warn(UnknownVerdictWarning("\n".join(format_result(result))), stacklevel=2)
        return violation_error(verdict, str(run.artifacts), self.settings.seed, item.nodeid,
                               unknown_fails=unknown_fails)

    def _apart(self, nodeid: str, verdict: Verdict, leaks: Result, unsettled: Result | None) -> Verdict:
        """Add what keeps tests apart: a settle that timed out, work leaked from earlier tests
        (also recorded as a failure of the test it leaked from)."""
        extra = tuple(r for r in (unsettled, leaks) if r is not None and r.valid is False)
        for origin in leaks.details.get("leaked_from", []) if leaks.valid is False else []:
            if origin in self.verdicts:
                earlier = self.verdicts[origin]
                self.verdicts[origin] = Verdict(earlier.results + (leaked_to_later(nodeid, leaks),),
                                                earlier.options)
        return Verdict(verdict.results + extra, verdict.options) if extra else verdict

    def _save(self, item: pytest.Item, run: Run, history, snapshot, verdict: Verdict) -> None:
        from harness.report import junit_properties, write_artifacts

        write_artifacts(run.artifacts, history, snapshot, verdict, title=item.nodeid,
                        seed=self.settings.seed, nodeid=item.nodeid)
        item.stash[VERDICT_KEY] = verdict
        self.verdicts[item.nodeid] = verdict
        item.user_properties.extend(junit_properties(verdict, self.settings.seed, run.artifacts))

    # -- stack lifecycle -----------------------------------------------------------
    def stack(self) -> Stack:
        if self._stack is None:
            reaper.reap()  # what a killed earlier run left behind
            try:
                stack = Stack(self.settings, reaper.run_dir() / "stack", on_worker_event=self._worker_event)
                stack.start()  # stops what it started if it fails
            except ConfigError as exc:
                reaper.remove_run_dir()
                pytest.exit(f"jobquake: {exc}", returncode=pytest.ExitCode.USAGE_ERROR)
            except BaseException:
                reaper.remove_run_dir()  # nothing of a failed start stays, the in-memory cluster included
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
        run.faults.heal_all()
        try:
            isolate(run, run.settler.read_all())  # nothing of this test may reach the next one
        finally:
            run._save_logs()
            run._close()
            self._run = None
