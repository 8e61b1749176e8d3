"""The instrumentation folder is private to the run, and events are read only from our own file."""
from __future__ import annotations

import os
import stat

import pytest

from harness.errors import ConfigError
from harness.instrument import _context, _events
from harness.instrument.control import InstrumentControl
from harness.instrument._events import ATTEMPTS_DIR, EVENTS_FILE


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_create_makes_the_folder_and_its_files_owner_only(tmp_path):
    control = InstrumentControl.create(tmp_path / "instrument")
    assert mode(control.path) == 0o700 and mode(control.path / ATTEMPTS_DIR) == 0o700
    assert mode(control.path / EVENTS_FILE) == 0o600
    assert _context.next_attempt(str(control.path), "task", "job-1", fallback=0) == 1
    (counter,) = (control.path / ATTEMPTS_DIR).iterdir()
    assert mode(counter) & stat.S_IRWXO == 0


def test_create_can_share_the_folder_with_the_apps_group(tmp_path):
    control = InstrumentControl.create(tmp_path / "instrument", group=os.getegid())
    assert mode(control.path) == 0o2770 and mode(control.path / EVENTS_FILE) == 0o660
    control.reset()  # a new test: the attempts folder is made anew with the channel's mode
    assert mode(control.path / ATTEMPTS_DIR) == 0o2770
    assert os.stat(control.path / ATTEMPTS_DIR).st_gid == os.getegid()


def test_reset_forgets_events_and_attempts_and_keeps_the_modes(tmp_path):
    control = InstrumentControl.create(tmp_path / "instrument")
    _events.record(str(control.path), "task", "start", job_id="j1", attempt=1)
    assert [r["name"] for r in control.records()] == ["start"]
    assert _context.next_attempt(str(control.path), "task", "j1", fallback=0) == 1
    control.reset()
    assert control.records() == []
    assert _context.next_attempt(str(control.path), "task", "j1", fallback=0) == 1
    assert mode(control.path / EVENTS_FILE) == 0o600 and mode(control.path / ATTEMPTS_DIR) == 0o700


def test_a_folder_others_can_write_to_is_refused(tmp_path):
    control = InstrumentControl.create(tmp_path / "instrument")
    os.chmod(control.path, 0o777)
    with pytest.raises(ConfigError, match="instrumentation folder .* is open to every user"):
        control.records()
    with pytest.raises(ConfigError, match="open to every user"):
        control.reset()


def test_an_events_file_others_can_write_to_is_refused(tmp_path):
    control = InstrumentControl.create(tmp_path / "instrument")
    _events.record(str(control.path), "task", "forged")
    os.chmod(control.path / EVENTS_FILE, 0o666)
    with pytest.raises(ConfigError, match=r"events file .* is open to every user \(mode 666\).*not read"):
        control.records()


def test_a_symlinked_folder_or_events_file_is_not_followed(tmp_path):
    control = InstrumentControl.create(tmp_path / "instrument")
    (tmp_path / "link").symlink_to(control.path)
    with pytest.raises(ConfigError, match="not a folder"):
        InstrumentControl(tmp_path / "link").records()
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_text('{"t": 0, "type": "task", "name": "forged"}\n')
    elsewhere.chmod(0o600)
    (control.path / EVENTS_FILE).unlink()
    (control.path / EVENTS_FILE).symlink_to(elsewhere)
    with pytest.raises(ConfigError, match="events file"):
        control.records()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another uid needs root")
def test_an_events_file_of_another_user_is_refused(tmp_path):
    control = InstrumentControl.create(tmp_path / "instrument")
    os.chown(control.path / EVENTS_FILE, 12345, -1)
    with pytest.raises(ConfigError, match="owned by uid 12345, not by this user"):
        control.records()
    os.chown(control.path, 12345, -1)
    with pytest.raises(ConfigError, match="instrumentation folder .* owned by uid 12345"):
        control.records()
