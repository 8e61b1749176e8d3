"""The run cannot forget to judge: mis-declared scenarios are collection errors naming what is known."""
from __future__ import annotations

import pytest

PYPROJECT = '[tool.jobquake]\nmutants = "catalogue:MUTANTS"\n'
CATALOGUE = 'MUTANTS = {"acks-early": "the task is acked before it runs"}\n'


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(".toml", pyproject=PYPROJECT)
    pytester.makepyfile(catalogue=CATALOGUE)
    return pytester


def collect(pytester: pytest.Pytester, body: str) -> pytest.RunResult:
    pytester.makepyfile(test_scenario="import pytest\n\n" + body)
    return pytester.runpytest_subprocess("--collect-only", "-q")


def errors(result: pytest.RunResult) -> str:
    assert result.ret != 0, result.stdout.str()
    return result.stdout.str()


def test_a_marker_without_the_jq_fixture_is_a_collection_error(project):
    out = errors(collect(project, '@pytest.mark.jobquake(checks=["sweep_complete"])\n'
                                  'def test_forgets_the_fixture():\n    pass\n'))
    assert "ERROR collecting test_scenario.py" in out
    assert "@pytest.mark.jobquake without the 'jq' fixture: nothing would judge this scenario" in out


def test_a_misspelt_keyword_lists_the_known_ones(project):
    out = errors(collect(project, '@pytest.mark.jobquake(chekcs=["sweep_complete"])\n'
                                  'def test_x(jq):\n    pass\n'))
    assert "unknown keyword 'chekcs'; known: checks, skip_checks, settle, options" in out


def test_an_unknown_checker_and_an_unknown_option_are_named(project):
    out = errors(collect(project, '@pytest.mark.jobquake(checks=["sweep_compleat"])\n'
                                  'def test_x(jq):\n    pass\n'))
    assert "no checker named 'sweep_compleat'; known: " in out and "every_job_terminal" in out
    out = errors(collect(project, '@pytest.mark.jobquake(options={"every_job_terminal": {"states": []}})\n'
                                  'def test_y(jq):\n    pass\n'))
    assert "checker 'every_job_terminal' has no option 'states'; it has: terminal_states" in out


def test_catches_names_an_existing_mutant_and_invariant(project):
    out = errors(collect(project, '@pytest.mark.catches("acks-late", invariant="every_job_terminal")\n'
                                  '@pytest.mark.catches("acks-early", invariant="all_good")\n'
                                  'def test_x(jq):\n    pass\n'))
    assert "catches('acks-late'): no such mutant; known: acks-early" in out
    assert "catches(invariant='all_good'): no checker of that name" in out


def test_catches_names_an_invariant_the_scenario_runs(project):
    out = errors(collect(project, '@pytest.mark.catches("acks-early", invariant="sweep_complete")\n'
                                  'def test_x(jq):\n    pass\n'))
    assert "invariant='sweep_complete'): this scenario does not run that checker (it runs: " in out


def test_a_scenario_that_runs_no_checker_is_an_error(project):
    out = errors(collect(project, '@pytest.mark.jobquake(skip_checks=["every_job_terminal", '
                                  '"no_double_billing", "no_lost_submission"])\n'
                                  'def test_x(jq):\n    pass\n'))
    assert "this scenario runs no checker" in out


def test_well_declared_scenarios_collect(project):
    result = collect(project, '@pytest.mark.catches("acks-early", invariant="every_job_terminal")\n'
                              '@pytest.mark.jobquake(checks=["sweep_complete"], expect_paid_calls=0,\n'
                              '                      options={"sweep_complete": {"ended_states": ["done"]}})\n'
                              'def test_x(jq):\n    pass\n\ndef test_plain():\n    pass\n')
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*2 tests collected*"])


def test_a_generic_invariant_may_be_named_unlisted_unless_the_scenario_skips_it(project):
    """It runs wherever the run has its evidence, which the mutant itself may produce (a retry)."""
    body = ('@pytest.mark.catches("acks-early", invariant="retries_keep_spacing_and_budget")\n'
            '@pytest.mark.jobquake({})\ndef test_x(jq):\n    pass\n')
    assert collect(project, body.format("")).ret == 0
    out = errors(collect(project, body.format('skip_checks=["retries_keep_spacing_and_budget"]')))
    assert "invariant='retries_keep_spacing_and_budget'): this scenario does not run that checker" in out


def test_no_listing_of_catches_when_a_scenario_file_does_not_collect(project):
    """The listing feeds `jobquake mutants --declared`: one file's catches missing would go unseen."""
    project.makepyfile(test_fine='import pytest\n\n@pytest.mark.catches("acks-early", '
                                 'invariant="every_job_terminal")\ndef test_x(jq):\n    pass\n',
                       test_broken="import no_such_module\n")
    listing = project.path / "catches.json"
    result = project.runpytest_subprocess(f"--jobquake-list-catches={listing}", "-q")
    assert "ERROR collecting test_broken.py" in result.stdout.str()
    assert not listing.exists()
    (project.path / "test_broken.py").unlink()
    project.runpytest_subprocess(f"--jobquake-list-catches={listing}", "-q")
    assert listing.exists() and "acks-early" in listing.read_text()
