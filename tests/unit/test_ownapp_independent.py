"""The second app is an ordinary app: its code imports nothing from jobquake and shares nothing with refapp."""
from __future__ import annotations

import ast
from pathlib import Path

APP = Path(__file__).resolve().parents[1] / "ownapp" / "tickets"
OURS = {"harness", "refapp", "scenarios", "jobquake", "tests"}


def _imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__":
            names |= {a.value.split(".")[0] for a in node.args if isinstance(a, ast.Constant)}
    return names


def test_the_second_apps_code_imports_nothing_from_jobquake_or_refapp():
    files = sorted(APP.rglob("*.py"))
    assert len(files) >= 8
    for path in files:
        assert not _imported(path) & OURS, f"{path} imports {_imported(path) & OURS}"
        text = path.read_text()
        assert "harness" not in text and "refapp" not in text and "jobquake" not in text.lower(), path


def test_the_second_app_uses_the_official_openai_client_and_its_own_names():
    imports = set().union(*(_imported(p) for p in APP.rglob("*.py")))
    assert {"openai", "celery", "sqlalchemy"} <= imports
    schema = (APP / "schema.py").read_text()
    for refapp_name in ('"jobs"', '"state"', '"attempt"', '"heartbeat_at"', '"reason"'):
        assert refapp_name not in schema
