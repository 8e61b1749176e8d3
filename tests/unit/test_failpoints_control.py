"""The harness side: arm-time validation, the directory's files, disarm / release / reset."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest

from harness import failpoints
from harness.errors import ConfigError, FaultError
from harness.failpoints import failpoint
from harness.failpoints.control import FailpointControl
from harness.failpoints.spec import ENV_VAR, GENERATION


@pytest.fixture
def control(tmp_path):
    ctl = FailpointControl.create(tmp_path / "fp")
    failpoints.configure(ctl.path)
    yield ctl
    ctl.disarm_all()
    failpoints.configure(None)


@pytest.mark.parametrize("action, kwargs, why", [
    ("explode", {}, "unknown action 'explode'"),
    ("raise", {}, "needs exception="),
    ("raise", {"exception": "NoSuchBuiltinError"}, "no builtin named"),
    ("raise", {"exception": "os.path"}, "not an exception class"),
    ("raise", {"exception": "sqlalchemy.exc.NoSuchError"}, "has no attribute 'NoSuchError'"),
    ("sleep", {}, "needs seconds="),
    ("sleep", {"seconds": -1}, "must not be negative"),
    ("sleep", {"seconds": "1"}, "seconds must be int or float"),
    ("kill", {"group": 1}, "group must be bool"),
    ("kill", {"signal": 9}, "takes no parameter signal"),
    ("return", {"probability": 1.5}, "probability must be a number between 0 and 1"),
    ("return", {"probability": -0.1}, "probability must be a number between 0 and 1"),
    ("return", {"once": True, "times": 2}, "either once=True or times=n"),
    ("return", {"times": 0}, "times must be a positive int"),
    ("return", {"value": object()}, "params must be JSON values"),
])
def test_bad_armings_fail_at_arm_time_naming_the_failpoint(control, action, kwargs, why):
    with pytest.raises(FaultError, match=why) as info:
        control.arm("submit.after_job_write", action, **kwargs)
    assert "submit.after_job_write" in str(info.value)
    assert control.armed() == {}


def test_exception_from_a_package_the_harness_lacks_is_left_to_the_app(control):
    control.arm("p", "raise", exception="app_only_package.errors.Boom")
    assert control.armed()["p"]["params"]["exception"] == "app_only_package.errors.Boom"


def test_create_lays_out_files_private_to_this_user(tmp_path):
    ctl = FailpointControl.create(tmp_path / "fp")
    assert GENERATION.unpack((ctl.path / "state").read_bytes())[0] == 0
    assert json.loads((ctl.path / "armed.json").read_text()) == {"failpoints": {}}
    assert stat.S_IMODE(os.stat(ctl.path).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(ctl.path / "triggers.jsonl").st_mode) == 0o600
    ctl.arm("p", "return", value=1)
    assert stat.S_IMODE(os.stat(ctl.path / "armed.json").st_mode) == 0o600
    assert ctl.env() == {ENV_VAR: str(ctl.path)}


def test_create_can_share_the_channel_with_the_apps_group(tmp_path):
    ctl = FailpointControl.create(tmp_path / "fp", group=os.getegid())
    assert stat.S_IMODE(os.stat(ctl.path).st_mode) == 0o2770
    ctl.arm("p", "return", value=1)
    assert stat.S_IMODE(os.stat(ctl.path / "armed.json").st_mode) == 0o660
    assert stat.S_IMODE(os.stat(ctl.path / "triggers.jsonl").st_mode) == 0o660


def test_a_control_directory_others_can_write_to_or_a_symlink_is_refused(tmp_path):
    ctl = FailpointControl.create(tmp_path / "fp")
    os.chmod(ctl.path, 0o777)
    with pytest.raises(ConfigError, match="open to every user"):
        FailpointControl(ctl.path)
    os.chmod(ctl.path, 0o700)
    (tmp_path / "link").symlink_to(ctl.path)
    with pytest.raises(ConfigError, match="not a folder"):
        FailpointControl(tmp_path / "link")


def test_every_change_bumps_the_generation(control):
    def generation():
        return GENERATION.unpack((control.path / "state").read_bytes())[0]

    armed = control.arm("p", "hang")
    assert generation() == armed.arm
    armed.release()
    control.disarm("p")
    assert generation() == armed.arm + 2


def test_configure_rejects_a_directory_that_is_not_a_control_directory(tmp_path):
    with pytest.raises(ConfigError, match="not usable"):
        failpoints.configure(tmp_path)
    with pytest.raises(ConfigError, match="not a failpoint control directory"):
        FailpointControl(tmp_path)


def test_release_of_a_non_releasable_or_unarmed_failpoint_fails(control):
    control.arm("p", "return", value=1)
    with pytest.raises(FaultError, match="cannot release a 'return' action"):
        control.release("p")
    with pytest.raises(FaultError, match="not armed"):
        control.release("nothing")


def test_an_old_armed_handle_does_not_touch_a_newer_arming(control):
    old = control.arm("p", "hang")
    control.arm("p", "return", value=2)
    old.heal()
    assert failpoint("p") == 2
    with pytest.raises(FaultError, match="not armed"):
        old.release()


def test_an_armings_wait_without_a_timeout_returns_its_firing(control):
    armed = control.arm("p", "return", value=1)
    assert failpoint("p", job_id="j") == 1
    [fired] = armed.wait()  # the default bound: what scenarios write
    assert fired["name"] == "p" and fired["context"] == {"job_id": "j"}


def test_reset_disarms_and_forgets_triggers_and_counts(control):
    control.arm("p", "return", value=1, once=True)
    control.arm("q", "return", value=1)
    failpoint("p")
    failpoint("q")
    control.reset()
    assert control.armed() == {} and control.triggers() == []
    assert failpoint("p") is None
    assert list((control.path / "counters").iterdir()) == []


def test_context_manager_disarms_on_exit(tmp_path):
    with FailpointControl.create(tmp_path / "fp") as ctl:
        ctl.arm("p", "hang")
    assert ctl.armed() == {}


def test_import_pulls_in_stdlib_only_and_opens_nothing(tmp_path):
    """What a production process pays: no json, no random, no third-party import, no file I/O."""
    code = ("import sys; before = set(sys.modules); import harness.failpoints as f; "
            "print(sorted(set(sys.modules) - before)); print(f.configured_dir())")
    # harness._lazy: the package's lazy names (importlib and sys only, both loaded already)
    allowed = {"harness", "harness._lazy", "harness.failpoints", "harness.failpoints._registry",
               "harness.failpoints._state", "harness.failpoints.spec"}
    for env_value in (None, str(tmp_path / "does-not-exist-yet")):
        env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
        if env_value:
            env[ENV_VAR] = env_value
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True).stdout.splitlines()
        new = set(eval(out[0]))  # noqa: S307 - our own printed list
        ours = {m for m in new if m.startswith("harness")}
        assert ours == allowed
        assert all(m.split(".")[0] in sys.stdlib_module_names for m in new - ours)
        assert not {"json", "random", "dataclasses", "inspect"} & new
        assert out[1] == str(env_value)
