"""The paid API's config keys: call_key, call_key_header and the price table."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.config import resolve
from harness.errors import ConfigError


def test_defaults_attribute_by_headers_only():
    cfg = resolve(environ={})
    assert (cfg.call_key, cfg.call_key_header, cfg.paidapi_prices) == ("", "Idempotency-Key", {})


def test_keys_and_prices_come_from_pyproject(tmp_path: Path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.jobquake]\ncall_key = "sum:{job_id}:{step}"\n'
                         '[tool.jobquake.paidapi_prices]\n"gpt-4o-mini" = {input = 0.2, output = 0.8}\n')
    cfg = resolve(environ={}, pyproject=pyproject)
    assert cfg.call_key == "sum:{job_id}:{step}"
    assert cfg.paidapi_prices == {"gpt-4o-mini": {"input": 0.2, "output": 0.8}}


@pytest.mark.parametrize(("body", "key", "says"), [
    ('call_key = "sum:{step}"', "call_key", "{job_id}"),
    ('paidapi_prices = {m = {input = "cheap"}}', "paidapi_prices", "paidapi_prices.m"),
    ('paidapi_prices = {m = {input = 1, outptu = 2}}', "paidapi_prices", "paidapi_prices.m"),
])
def test_bad_values_name_the_key(tmp_path: Path, body: str, key: str, says: str):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(f"[tool.jobquake]\n{body}\n")
    with pytest.raises(ConfigError) as caught:
        resolve(environ={}, pyproject=pyproject)
    assert caught.value.key == key and says in str(caught.value)


def test_call_key_can_come_from_the_environment():
    cfg = resolve(environ={"JOBQUAKE_CALL_KEY": "{job_id}-{attempt}"})
    assert (cfg.call_key, cfg.sources["call_key"]) == ("{job_id}-{attempt}", "environment")
