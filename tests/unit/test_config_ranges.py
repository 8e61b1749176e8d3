"""Every number a setting holds has a range; named objects must be of the right kind."""
from __future__ import annotations

import os

import pytest

from harness.config import RANGES, load_callable, resolve
from harness.errors import ConfigError
from harness.stack.schema import schema_builder


@pytest.mark.parametrize("value", ["inf", "nan", "-inf", "0.00001", "11", "1e308"])
def test_time_scale_must_be_finite_and_between_1e_4_and_10(value):
    with pytest.raises(ConfigError, match=r"'time_scale' \(command line\): must be ") as err:
        resolve(cli={"time_scale": value}, environ={})
    assert err.value.key == "time_scale" and err.value.source == "command line"


@pytest.mark.parametrize("value", ["0.0001", "10", "0.01"])
def test_time_scale_bounds_are_inclusive(value):
    assert resolve(cli={"time_scale": value}, environ={}).time_scale == float(value)


@pytest.mark.parametrize("key, value", [("workers", "65"), ("postgres_max_connections", "0"),
                                        ("start_timeout", "inf"), ("settle_timeout", "1e9"),
                                        ("seed", "-1")])
def test_every_numeric_setting_is_bounded(key, value):
    with pytest.raises(ConfigError, match=f"'JOBQUAKE_{key.upper()}' \\(environment\\): must be a finite"):
        resolve(environ={f"JOBQUAKE_{key.upper()}": value})


def test_every_numeric_option_has_a_range():
    numeric = {"seed", "time_scale", "workers", "start_timeout", "settle_timeout", "postgres_max_connections"}
    assert numeric <= set(RANGES)


def test_the_memory_dir_variable_is_not_mistaken_for_a_key():
    """The README documents JOBQUAKE_MEMORY_DIR; the reaper reads it, config must let it be."""
    config = resolve(environ={"JOBQUAKE_MEMORY_DIR": "", "JOBQUAKE_REQUIRE_ROOT_TESTS": "1"})
    assert config.backend == "process"


def test_a_misspelled_key_suggests_the_right_one(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[tool.jobquake]\nworkres = 2\n")
    with pytest.raises(ConfigError, match=r"unknown key 'workres' .* \(did you mean 'workers'\?\)"):
        resolve(environ={}, pyproject=pyproject)


def test_a_key_naming_the_wrong_kind_of_object_says_what_it_found():
    with pytest.raises(ConfigError, match=r"schema = 'math:pi' names a float \(3.14.*\), not a function"):
        load_callable("math:pi", "schema")
    with pytest.raises(ConfigError, match=r"mutants = 'os.path:join' names a function .*, not a mapping"):
        load_callable("os.path:join", "mutants", kind="mapping")
    assert load_callable("os.path:join", "budgets")


def test_a_schema_that_cannot_take_a_url_is_a_config_error():
    config = resolve(environ={}, cli={"schema": "os.path:samefile"})
    with pytest.raises(ConfigError, match=r"schema = 'os.path:samefile' cannot be called with a database URL"):
        schema_builder(config.schema, config.root, lambda url: {})


def test_a_schema_that_exits_is_a_config_error_not_a_bare_system_exit(tmp_path, monkeypatch):
    (tmp_path / "cli_app.py").write_text("import argparse\n\ndef main(argv=None):\n"
                                         "    argparse.ArgumentParser().parse_args(['--nope'])\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    config = resolve(environ={}, cli={"schema": "cli_app:main"})
    build = schema_builder(config.schema, config.root, lambda url: {})
    with pytest.raises(ConfigError, match=r"schema = 'cli_app:main' exited \(SystemExit\(2\)\)"):
        build("postgresql://127.0.0.1:1/x")


def test_a_schema_command_or_a_function_without_arguments_runs_apart_with_the_apps_env(tmp_path):
    """Alembic's ``upgrade head`` reads the database from the app's own settings: the command (and a
    function taking no URL) runs in the project folder with the app's variables pointing at the
    template database, and a failure says what ran and what it printed."""
    (tmp_path / "appdb.py").write_text("import os\n\ndef init_db():\n"
                                       "    open('made-by-function', 'w').write(os.environ['APP_DB'])\n")
    env = lambda url: {**os.environ, "APP_DB": url}  # noqa: E731 - the app's env, as the stack renders it
    schema_builder("appdb:init_db", tmp_path, env)("postgresql+psycopg://t/template")
    assert (tmp_path / "made-by-function").read_text() == "postgresql+psycopg://t/template"
    command = "python -c \"import os; open('made-by-command', 'w').write(os.environ['APP_DB'])\""
    schema_builder(command, tmp_path, env)("postgresql+psycopg://t/template2")
    assert (tmp_path / "made-by-command").read_text() == "postgresql+psycopg://t/template2"
    with pytest.raises(ConfigError, match=r"(?s)schema = 'python -c .*exit 3.*boom"):
        schema_builder("python -c \"import sys; print('boom'); sys.exit(3)\"", tmp_path, env)("postgresql://x")
