"""The two tiers stay honest: no test over the fast tier's budget goes unmarked.

``tests/common/tiers.py`` lists the slow tests and ``tests/conftest.py``
marks them. Every ``make test`` / ``make test-all`` records each test's
duration in ``.jobquake/test-durations.json`` (the last few runs of each);
the last test here reads that record and judges each test by its fastest run. ``make test-all`` (CI) runs this file again after the whole suite,
with ``JOBQUAKE_REQUIRE_DURATIONS=1``: there a missing record fails instead
of skipping, so the check always sees the run that just measured.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.common import tiers

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / tiers.DEFAULT_RECORD


def test_a_test_is_judged_by_its_fastest_recorded_run():
    record = {"tests/unit/test_a.py::test_loaded_once": [tiers.BUDGET_S * 3, tiers.BUDGET_S - 1],
              "tests/unit/test_a.py::test_always_long": [tiers.BUDGET_S + 2, tiers.BUDGET_S + 1]}
    assert tiers.over_budget(tiers.fastest(record)) == {"tests/unit/test_a.py::test_always_long": tiers.BUDGET_S + 1}


def test_a_test_over_the_budget_is_named_unless_it_is_in_the_slow_tier():
    slow = sorted(tiers.SLOW_FILES)[0]
    durations = {"tests/unit/test_a.py::test_quick": tiers.BUDGET_S - 1,
                 "tests/unit/test_a.py::test_long[1]": tiers.BUDGET_S + 1,
                 f"{slow}::test_whole_nightly": tiers.BUDGET_S * 10}
    assert tiers.over_budget(durations) == {"tests/unit/test_a.py::test_long[1]": tiers.BUDGET_S + 1}


def test_every_slow_file_exists():
    missing = sorted(path for path in tiers.SLOW_FILES if not (ROOT / path).is_file())
    assert missing == [], f"tests/common/tiers.py lists files that are gone (renamed?): {missing}"


def test_the_slow_files_are_left_out_of_the_fast_tier_at_collection():
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q",
                           "-m", "not slow", *sorted(tiers.SLOW_FILES)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 5, done.stdout[-3000:] + done.stderr[-2000:]  # 5: every test deselected
    assert "deselected" in done.stdout.splitlines()[-1], done.stdout[-3000:]


def test_the_recorder_adds_up_phases_under_xdist_and_keeps_earlier_tests(pytester: pytest.Pytester, monkeypatch):
    record = pytester.path / "durations.json"
    record.write_text(json.dumps({"test_gone.py::test_earlier": [1.5], "test_two.py::test_b": [999.0, 998.0, 997.0]}))
    pytester.makeconftest(f"""
        from pathlib import Path
        from tests.common.tiers import DurationRecorder

        def pytest_configure(config):
            config.pluginmanager.register(DurationRecorder(Path({str(record)!r})), "tier-durations")
    """)
    pytester.makepyfile(test_one="def test_a():\n    pass\n", test_two="def test_b():\n    pass\n")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the inner session imports tests.common.tiers
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    recorded = tiers.read(record)
    assert set(recorded) == {"test_gone.py::test_earlier", "test_one.py::test_a", "test_two.py::test_b"}
    assert recorded["test_gone.py::test_earlier"] == [1.5]  # not run this time: kept as it was
    assert recorded["test_two.py::test_b"][:2] == [998.0, 997.0] and len(recorded["test_two.py::test_b"]) == tiers.KEEP
    assert 0 <= recorded["test_two.py::test_b"][-1] < 5 and len(recorded["test_one.py::test_a"]) == 1


def test_no_test_outside_the_slow_tier_took_longer_than_the_budget_in_the_last_recorded_run():
    if not RECORD.exists():
        reason = f"no {tiers.DEFAULT_RECORD}: `make test` and `make test-all` record one"
        if os.environ.get("JOBQUAKE_REQUIRE_DURATIONS") == "1":
            pytest.fail(reason + " (JOBQUAKE_REQUIRE_DURATIONS=1: it must be there)")
        pytest.skip(reason)
    recorded = tiers.read(RECORD)
    assert recorded, f"{RECORD} holds no test"
    over = tiers.over_budget(tiers.fastest(recorded))
    assert over == {}, (f"tests that took longer than {tiers.BUDGET_S:.0f} s in each of their last {tiers.KEEP} "
                        f"recorded runs belong in the slow tier (tests/common/tiers.py SLOW_FILES) or need to "
                        f"get faster: " + ", ".join(f"{nodeid} {took:.0f} s" for nodeid, took in over.items()))
