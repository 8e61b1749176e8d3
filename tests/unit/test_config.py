"""Config resolution: precedence, provenance, and errors that name the key and the source."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.config import resolve
from harness.errors import ConfigError


def write_pyproject(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "pyproject.toml"
    path.write_text(body)
    return path


def test_defaults_and_a_random_seed_that_says_so():
    cfg = resolve(environ={})
    assert cfg.backend == "process"
    assert cfg.time_scale == 0.01
    assert cfg.sources["backend"] == "default"
    assert isinstance(cfg.seed, int)
    assert cfg.sources["seed"].startswith("random")


def test_precedence_cli_over_env_over_ini_over_pyproject(tmp_path):
    pyproject = write_pyproject(tmp_path, "[tool.jobquake]\nworkers = 1\ntime_scale = 0.5\nseed = 1\nbackend = 'docker'\n")
    cfg = resolve(cli={"seed": "4"}, ini={"seed": "3", "time_scale": "0.25"},
                  environ={"JOBQUAKE_SEED": "2", "JOBQUAKE_BACKEND": "process"}, pyproject=pyproject)
    assert (cfg.seed, cfg.sources["seed"]) == (4, "command line")
    assert (cfg.backend, cfg.sources["backend"]) == ("process", "environment")
    assert (cfg.time_scale, cfg.sources["time_scale"]) == (0.25, "ini")
    assert cfg.workers == 1 and "[tool.jobquake]" in cfg.sources["workers"]


def test_tables_come_from_pyproject(tmp_path):
    pyproject = write_pyproject(tmp_path, """
[tool.jobquake.env]
APP_DB = "{database_url}"
[tool.jobquake.processes.api]
command = "python -m app.api --port {port}"
ready = "http:/health"
[[tool.jobquake.queues]]
name = "jobs"
""")
    cfg = resolve(environ={}, pyproject=pyproject)
    assert cfg.env == {"APP_DB": "{database_url}"}
    assert cfg.processes["api"]["ready"] == "http:/health"
    assert cfg.queues == ({"name": "jobs"},)


@pytest.mark.parametrize("kwargs, key, source", [
    ({"environ": {"JOBQUAKE_TIME_SCALE": "fast"}}, "time_scale", "environment"),
    ({"environ": {"JOBQUAKE_TIME_SCALE": "-1"}}, "time_scale", "environment"),
    ({"environ": {}, "cli": {"backend": "kubernetes"}}, "backend", "command line"),
    ({"environ": {}, "ini": {"workers": "many"}}, "workers", "ini"),
    ({"environ": {"JOBQUAKE_WORKRES": "2"}}, "workres", "environment"),
    ({"environ": {"JOBQUAKE_ENV": "x"}}, "env", "environment"),
])
def test_errors_name_the_key_and_the_source(kwargs, key, source):
    with pytest.raises(ConfigError) as err:
        resolve(**kwargs)
    assert err.value.key == key and err.value.source == source
    assert key in str(err.value).lower() and source in str(err.value)


def test_unknown_key_in_pyproject_names_the_file(tmp_path):
    pyproject = write_pyproject(tmp_path, "[tool.jobquake]\nworker = 2\n")
    with pytest.raises(ConfigError, match=r"unknown key 'worker' \(\[tool.jobquake\] in .*pyproject.toml\)"):
        resolve(environ={}, pyproject=pyproject)


def test_invalid_toml_is_a_config_error(tmp_path):
    pyproject = write_pyproject(tmp_path, "[tool.jobquake\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        resolve(environ={}, pyproject=pyproject)


def test_reserved_env_vars_are_not_keys():
    cfg = resolve(environ={"JOBQUAKE_FAILPOINTS_DIR": "/tmp/x", "JOBQUAKE_CACHE_DIR": "/tmp/y"})
    assert cfg.backend == "process"


def test_cli_config_prints_each_value_with_its_source(tmp_path, monkeypatch, capsys):
    write_pyproject(tmp_path, "[tool.jobquake]\nworkers = 3\n[tool.pytest.ini_options]\njobquake_seed = '9'\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JOBQUAKE_TIME_SCALE", "0.2")
    assert main(["config"]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert "3" in lines["workers"] and "[tool.jobquake]" in lines["workers"]
    assert "0.2" in lines["time_scale"] and "[environment]" in lines["time_scale"]
    assert "9" in lines["seed"] and "[ini]" in lines["seed"]


def test_cli_config_bad_value_exits_2_with_the_key(monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JOBQUAKE_WORKERS", "-3")
    assert main(["config"]) == 2
    assert "JOBQUAKE_WORKERS" in capsys.readouterr().err


# -- the typed object ------------------------------------------------------------------------------
def _accepts(hint, value) -> bool:
    import typing

    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return value in typing.get_args(hint)
    return isinstance(value, origin or hint)


def test_every_setting_is_a_typed_field_holding_its_type(tmp_path):
    import dataclasses
    import typing

    from harness.config import OPTIONS, Config

    hints = typing.get_type_hints(Config)
    settings = [f.name for f in dataclasses.fields(Config) if f.name not in ("sources", "root", "more")]
    assert settings == [opt.key for opt in OPTIONS], "one field per key of OPTIONS, in their order"
    pyproject = write_pyproject(tmp_path, "[tool.jobquake]\nseed = 3\nterminal_states = ['ok']\n"
                                          "[tool.jobquake.env]\nA = '1'\n")
    cfg = resolve(environ={"JOBQUAKE_WORKERS": "3", "JOBQUAKE_INSTRUMENT": "no"}, pyproject=pyproject)
    wrong = {key: value for key, value in cfg.values.items()
             if value is not None and not _accepts(hints[key], value)}
    assert wrong == {}
    assert (cfg.workers, cfg.instrument, cfg.terminal_states, cfg.env) == (3, False, ("ok",), {"A": "1"})
    assert cfg.more == {}


def test_config_is_frozen_and_a_misspelt_setting_is_an_attribute_error():
    import dataclasses

    cfg = resolve(environ={})
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.workers = 5  # type: ignore[misc]
    with pytest.raises(AttributeError, match="no setting 'time_scales'"):
        cfg.time_scales  # noqa: B018


def test_harness_exports_config():
    import harness
    from harness.config import Config

    assert harness.Config is Config and "Config" in harness.__all__
