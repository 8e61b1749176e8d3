"""The artifacts folder has the rules of run state: another user can neither plant a file there nor swap one.

The attack: with ``--jobquake-artifacts`` in a shared folder, another user
planted ``run.json.tmp`` as a symlink to a file of root's, and the run
overwrote that file; the folder's owner could also swap evidence files
between the run and the verdict's reader.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from harness._safe_files import open_appending, write_replacing
from harness._artifacts_root import ArtifactsFolderError, checked_root, session_folder
from harness.report.json_report import write_json
from tests.plugin.test_plugin import PYPROJECT, SCENARIOS, TINYAPP

PLANT = """
import os, sys
folder, target = sys.argv[1], sys.argv[2]
os.makedirs(folder, mode=0o777)
os.chmod(folder, 0o777)
for name in ("run.json.tmp", "run.json", "latest"):
    os.symlink(target, os.path.join(folder, name))
"""


@pytest.fixture
def victim_file(tmp_path: Path) -> Path:
    """A file of ours (root's, in CI) that a planted symlink points at."""
    path = tmp_path / "precious"
    path.write_text("precious\n")
    return path


def test_a_folder_another_user_made_is_refused_and_nothing_is_written_through_it(attacker, shared_tmp, victim_file):
    planted = shared_tmp / "artifacts"
    done = attacker.python(PLANT.replace("sys.argv[1], sys.argv[2]", f"{str(planted)!r}, {str(victim_file)!r}"))
    assert done.returncode == 0, done.stderr
    with pytest.raises(ArtifactsFolderError, match=f"belongs to uid {attacker.uid}"):
        checked_root(planted)
    assert victim_file.read_text() == "precious\n"


def test_a_folder_inside_another_users_folder_is_refused(attacker, shared_tmp):
    theirs = shared_tmp / "theirs"
    done = attacker.python(f"import os\nos.mkdir({str(theirs)!r}, 0o755)\n")
    assert done.returncode == 0, done.stderr
    with pytest.raises(ArtifactsFolderError, match=f"{theirs} belongs to uid {attacker.uid}, who could move it"):
        checked_root(theirs / "artifacts")


@pytest.mark.parametrize("mode", [0o777, 0o757])
def test_a_folder_every_user_can_write_is_refused_with_one_line(tmp_path, mode):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(mode)
    with pytest.raises(ArtifactsFolderError) as refused:
        checked_root(shared)
    assert "it is writable by every user" in str(refused.value) and "\n" not in str(refused.value)
    with pytest.raises(ArtifactsFolderError, match=f"the folder above it, {shared}, is writable by every user"):
        checked_root(shared / "below")  # nor anything below it


def test_a_folder_its_group_can_write_is_refused_when_the_group_holds_another_user(attacker, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chown(shared, -1, attacker.gid)  # the other user's group
    shared.chmod(0o775)
    with pytest.raises(ArtifactsFolderError, match="writable by the other members of group"):
        checked_root(shared)
    with pytest.raises(ArtifactsFolderError, match="writable by the other members of group"):
        checked_root(shared / "below")


def test_a_folder_writable_by_a_group_of_ours_alone_is_fine(tmp_path):
    """A user-private group (Debian, Ubuntu: umask 002 makes a checkout 0775) holds nobody else."""
    ours = tmp_path / "checkout"
    ours.mkdir()
    ours.chmod(0o775)  # its group is ours alone: root's in CI, the user's own elsewhere
    assert checked_root(ours / ".jobquake" / "artifacts").is_dir()


def test_our_folders_are_made_private_and_a_sticky_shared_parent_is_fine(shared_tmp):
    root = checked_root(shared_tmp / "artifacts")  # as under /tmp: sticky, nobody can rename what is ours
    session = session_folder(root, "20260101-000000-1", newest=True)
    for folder in (root, session):
        info = folder.stat()
        assert info.st_uid == os.geteuid() and stat.S_IMODE(info.st_mode) == 0o700
    assert os.readlink(root / "latest") == session.name


def test_files_are_never_written_through_a_planted_symlink(tmp_path, victim_file):
    for name in ("verdict.json", "run.json", "snapshot.json"):
        (tmp_path / name).symlink_to(victim_file)
    write_replacing(tmp_path / "verdict.json", "{}")
    write_json(tmp_path / "run.json", {})
    assert not (tmp_path / "verdict.json").is_symlink() and (tmp_path / "verdict.json").read_text() == "{}"
    assert not (tmp_path / "run.json").is_symlink()
    (tmp_path / "history.jsonl").symlink_to(victim_file)
    with pytest.raises(OSError):
        open_appending(tmp_path / "history.jsonl")
    assert victim_file.read_text() == "precious\n"


def test_a_session_pointed_at_a_shared_folder_stops_with_one_line_before_starting_anything(pytester, tmp_path):
    pytester.makepyfile(tinyapp=TINYAPP, test_scenarios=SCENARIOS)
    pytester.makefile(".toml", pyproject=PYPROJECT)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", f"--jobquake-artifacts={shared / 'a'}",
                                           "-k", "reaches_done")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    lines = [line for line in (result.stdout.lines + result.stderr.lines) if "artifacts folder" in line]
    assert len(lines) == 1 and f"the folder above it, {shared}, is writable by every user (mode 777)" in lines[0], lines
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert not (shared / "a").exists()
