"""jobquake installs beside an app that has only a pinned requirements.txt, in either order, and works.

The third app (tests/recapapp) with its requirements pinned as a team's
would be (an older Celery, kombu, redis, httpx, openai client): installed
first and jobquake after it, or both in one ``pip install``. Every pin must
hold (nothing of the app's is upgraded or downgraded), and the app's kill
scenario must pass in that environment. Needs PyPI (skips without it);
each environment takes minutes to install: the slow tier.
"""
from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "tests" / "recapapp"
PINS = {  # what a team's requirements.txt of a year ago holds
    "fastapi": "0.111.0", "uvicorn": "0.29.0", "pydantic-settings": "2.2.1", "SQLAlchemy": "2.0.30",
    "alembic": "1.13.1", "psycopg[binary]": "3.2.1", "celery[redis]": "5.3.6", "kombu": "5.3.7",
    "redis": "5.0.4", "httpx": "0.27.0", "openai": "1.30.1",
}
INSTALL_TIMEOUT = 1200

pytestmark = pytest.mark.integration


def _pypi_reachable() -> bool:
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
    except OSError:
        return False
    return True


def _venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, timeout=120)
    return path / "bin"


def _pip(bin_dir: Path, *args: str) -> None:
    done = subprocess.run([str(bin_dir / "pip"), "install", "-q", *args], capture_output=True, text=True,
                          timeout=INSTALL_TIMEOUT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def _versions(bin_dir: Path) -> dict[str, str]:
    done = subprocess.run([str(bin_dir / "pip"), "list", "--format", "freeze"], capture_output=True, text=True,
                          check=True, timeout=120)
    pairs = (line.split("==", 1) for line in done.stdout.splitlines() if "==" in line)
    return {name.lower().replace("_", "-"): version for name, version in pairs}


def _pinned_app(tmp_path: Path) -> Path:
    app = tmp_path / "app"
    shutil.copytree(APP, app, ignore=shutil.ignore_patterns("__pycache__", ".jobquake"))
    (app / "requirements.txt").write_text("".join(f"{name}=={version}\n" for name, version in PINS.items()))
    return app


def _assert_pins_held(bin_dir: Path) -> None:
    installed = _versions(bin_dir)
    for spec, version in PINS.items():
        name = spec.split("[")[0].lower().replace("_", "-")
        assert installed.get(name) == version, f"{name}: pinned {version}, installed {installed.get(name)}"


def _kill_scenario_passes(bin_dir: Path, app: Path, tmp_path: Path) -> None:
    done = subprocess.run([str(bin_dir / "pytest"), "scenarios/test_kill_worker.py", "-q", "-p", "no:cacheprovider",
                           f"--jobquake-artifacts={tmp_path / 'artifacts'}"], cwd=app, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout[-4000:] + done.stderr[-2000:]


@pytest.fixture(scope="module", autouse=True)
def _needs_pypi() -> None:
    if not _pypi_reachable():
        pytest.skip("PyPI is not reachable from here: the install orders need it")


def test_the_apps_requirements_first_then_jobquake(tmp_path):
    app = _pinned_app(tmp_path)
    bin_dir = _venv(tmp_path / "venv")
    _pip(bin_dir, "-r", str(app / "requirements.txt"))
    _pip(bin_dir, str(ROOT))
    _assert_pins_held(bin_dir)
    _kill_scenario_passes(bin_dir, app, tmp_path)


def test_jobquake_and_the_apps_requirements_in_one_install(tmp_path):
    app = _pinned_app(tmp_path)
    bin_dir = _venv(tmp_path / "venv")
    _pip(bin_dir, str(ROOT), "-r", str(app / "requirements.txt"))
    _assert_pins_held(bin_dir)
    _kill_scenario_passes(bin_dir, app, tmp_path)
