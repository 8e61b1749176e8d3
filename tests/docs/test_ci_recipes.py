"""The CI recipes of examples/ci/ are valid for their platforms, run commands that exist, and are the
files the docs show.

Each file is validated against its platform's JSON schema (vendored in
``schemas/``, see its README: the tests run offline); every command a job
runs is checked by ``commands.problems`` (a jobquake option, a pytest option,
a make target that does not exist fails here); and docs/howto/ci.md and
nightly.md include the files themselves (pymdownx.snippets), so what a reader
copies is what is tested.
"""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import referencing
import yaml

from tests.docs import commands
from tests.docs.blocks import DOCS, ROOT, all_blocks

SCHEMAS = Path(__file__).parent / "schemas"
CI = ROOT / "examples" / "ci"
GITHUB, GITLAB = CI / "github-actions.yml", CI / "gitlab-ci.yml"
KUBERNETES, MERGE = CI / "nightly-indexed-job.yaml", CI / "nightly-merge-job.yaml"


class _Loader(yaml.SafeLoader):
    """YAML as the CI platforms read it: ``on`` / ``yes`` / ``no`` are strings, only true/false are booleans."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regex) for tag, regex in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver("tag:yaml.org,2002:bool", __import__("re").compile(r"^(?:true|false)$"), list("tf"))


def load(path: Path) -> list[dict]:
    return list(yaml.load_all(path.read_text(encoding="utf-8"), Loader=_Loader))


def _schema(name: str) -> dict:
    return json.loads((SCHEMAS / name).read_text(encoding="utf-8"))


def validator(name: str) -> jsonschema.protocols.Validator:
    schema = _schema(name)
    if name.startswith("kubernetes"):  # the Job schema refers to its definitions by URI
        definitions = referencing.Resource.from_contents(_schema("kubernetes-definitions.json"))
        registry = referencing.Registry().with_resource("https://kubernetes.io/api/_definitions.json", definitions)
        return jsonschema.Draft202012Validator(schema, registry=registry)
    return jsonschema.validators.validator_for(schema)(schema)


def errors(name: str, document: dict) -> list[str]:
    found = validator(name).iter_errors(document)
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:300]}" for e in found]


@pytest.mark.parametrize(("path", "schema"), [(GITHUB, "github-workflow.json"), (GITLAB, "gitlab-ci.json")])
def test_the_pipeline_is_valid_for_its_platform(path, schema):
    (document,) = load(path)
    assert errors(schema, document) == []


@pytest.mark.parametrize("path", [KUBERNETES, MERGE])
def test_each_kubernetes_manifest_is_a_valid_job(path):
    (document,) = load(path)
    assert document["kind"] == "Job" and errors("kubernetes-job-batch-v1.json", document) == []


def test_the_nightly_job_is_indexed_with_one_pod_per_shard():
    spec = load(KUBERNETES)[0]["spec"]
    assert spec["completionMode"] == "Indexed" and spec["completions"] == spec["parallelism"] == 4
    assert "--shard \"$JOB_COMPLETION_INDEX/4\"" in kubernetes_commands()[0]


@pytest.mark.parametrize(("path", "schema", "break_it"), [
    (GITHUB, "github-workflow.json", lambda d: d["jobs"]["scenarios"].update({"runs_on": "x"})),
    (GITLAB, "gitlab-ci.json", lambda d: d["scenarios"].update({"artifact": {}})),
    (KUBERNETES, "kubernetes-job-batch-v1.json", lambda d: d["spec"].update({"completionMod": "Indexed"})),
])
def test_the_schemas_refuse_a_misspelt_key(path, schema, break_it):
    """The check can fail: each schema rejects a key its platform does not know."""
    document = load(path)[0]
    break_it(document)
    assert errors(schema, document) != []


def github_commands() -> list[str]:
    (workflow,) = load(GITHUB)
    return [line for job in workflow["jobs"].values() for step in job["steps"] if "run" in step
            for line in commands.lines(step["run"])]


def gitlab_commands() -> list[str]:
    (pipeline,) = load(GITLAB)
    jobs = [pipeline["default"], *(v for v in pipeline.values() if isinstance(v, dict) and "script" in v)]
    return [line for job in jobs for key in ("before_script", "script") for line in job.get(key, [])]


def kubernetes_commands() -> list[str]:
    found = []
    for document in [*load(KUBERNETES), *load(MERGE)]:
        for container in document["spec"]["template"]["spec"]["containers"]:
            command = container["command"]
            assert command[:2] == ["sh", "-c"], command
            found.append(command[2])
    return found


RECIPE_COMMANDS = {"github": github_commands, "gitlab": gitlab_commands, "kubernetes": kubernetes_commands}


@pytest.mark.parametrize("recipe", sorted(RECIPE_COMMANDS))
def test_every_command_a_recipe_runs_exists(recipe):
    lines = RECIPE_COMMANDS[recipe]()
    assert any("jobquake nightly" in line and "--shard" in line for line in lines)
    assert any("jobquake merge" in line for line in lines)
    assert {line: commands.problems(line) for line in lines if commands.problems(line)} == {}


def test_the_scenarios_run_on_the_docker_backend_with_a_junit_report():
    for lines in (github_commands(), gitlab_commands()):
        scenario_runs = [line for line in lines if "pytest scenarios" in line]
        assert scenario_runs and all("--jobquake-backend docker" in line and "--junit-xml=" in line
                                     for line in scenario_runs)


def test_the_command_check_can_fail():
    assert commands.problems("jobquake nightly --shards 0/4") == ["jobquake nightly has no option --shards"]
    assert commands.problems("make no-such-target") != []
    assert commands.problems("pytest --jobquake-no-such-key=1") != []


def test_the_docs_show_the_recipe_files_themselves():
    included = {block.snippet for block in all_blocks("yaml", [DOCS / "howto" / "ci.md", DOCS / "howto" / "nightly.md"])}
    assert {GITHUB, GITLAB, KUBERNETES, MERGE} <= included
