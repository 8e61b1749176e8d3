"""Where throwaway data goes: a roomy tmpfs if there is one, the disk run folder otherwise."""
from __future__ import annotations

from harness.stack import reaper

DEAD_OWNER = "999999999-1"  # no pid this large runs: an owner that is gone


def test_memory_dir_defaults_to_a_folder_under_dev_shm(monkeypatch):
    monkeypatch.delenv(reaper.MEMORY_DIR_ENV, raising=False)
    assert reaper.memory_dir().parent == reaper.memory_root()
    assert str(reaper.memory_root()).startswith(reaper.DEFAULT_MEMORY_DIR)


def test_empty_setting_keeps_data_on_disk(monkeypatch):
    monkeypatch.setenv(reaper.MEMORY_DIR_ENV, "")
    assert reaper.memory_root() is None
    assert reaper.memory_dir() == reaper.run_dir()


def test_a_missing_or_small_memory_dir_falls_back_to_disk(monkeypatch, tmp_path, separate_owner):
    monkeypatch.setenv(reaper.MEMORY_DIR_ENV, str(tmp_path / "absent"))
    assert reaper.memory_dir() == reaper.run_dir()
    monkeypatch.setenv(reaper.MEMORY_DIR_ENV, str(tmp_path))
    monkeypatch.setattr(reaper, "MEMORY_MIN_FREE", 2**62)  # more room than any disk has
    assert reaper.memory_dir() == reaper.run_dir()


def test_a_chosen_memory_dir_holds_this_owners_folder(monkeypatch, tmp_path, separate_owner):
    monkeypatch.setenv(reaper.MEMORY_DIR_ENV, str(tmp_path))
    folder = reaper.memory_dir()
    assert folder == tmp_path / reaper.ROOT_NAME / reaper.owner_id()
    assert folder.is_dir()
    reaper.remove_run_dir()
    assert not folder.exists()


def test_reap_clears_a_dead_owners_memory_folder_even_when_the_tmpfs_is_full(monkeypatch, tmp_path):
    """Leftover clusters may be what fills the tmpfs: reaping must not wait for room."""
    monkeypatch.setenv(reaper.MEMORY_DIR_ENV, str(tmp_path))
    monkeypatch.setattr(reaper, "MEMORY_MIN_FREE", 2**62)
    leftover = tmp_path / reaper.ROOT_NAME / DEAD_OWNER / "pgdata-1"
    leftover.mkdir(parents=True)
    assert reaper.memory_root() is None
    reaper.reap()
    assert not leftover.parent.exists()
