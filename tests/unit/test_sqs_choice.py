"""Which SQS server a stack gets, how its clients are built, and the error when LocalStack is missing."""
from __future__ import annotations

import pytest

from harness.config import resolve
from harness.errors import ConfigError, ServiceError
from harness.stack import localstack, sqs_clients
from harness.stack.backends import ProcessBackend
from harness.stack.localstack import LocalStackSQS
from harness.stack.sqs import SQSService


def test_moto_is_the_default_and_localstack_is_chosen_by_flag_or_env():
    assert (resolve(environ={}).sqs, resolve(environ={}).sources["sqs"]) == ("moto", "default")
    assert resolve(cli={"sqs": "localstack"}, environ={}).sqs == "localstack"
    assert resolve(environ={"JOBQUAKE_SQS": "localstack"}).sqs == "localstack"


def test_an_unknown_sqs_server_is_an_error_naming_the_key_and_the_choices():
    with pytest.raises(ConfigError, match=r"'sqs'.*moto, localstack"):
        resolve(cli={"sqs": "elasticmq"}, environ={})


@pytest.mark.parametrize("choice, cls", [("moto", SQSService), ("localstack", LocalStackSQS)])
def test_the_process_backend_builds_the_chosen_server(choice, cls, tmp_path):
    backend = ProcessBackend(resolve(cli={"sqs": choice}, environ={}))
    service = backend.sqs("sqs", port=1, workdir=tmp_path)
    assert type(service) is cls
    assert service.sqs_service == choice


def test_localstack_clients_are_built_by_localstack_client(monkeypatch):
    from localstack_client import session

    made = []
    real = session.Session

    class Spy(real):  # type: ignore[misc, valid-type]
        def __init__(self, **kw):
            made.append(kw)
            super().__init__(**kw)

    monkeypatch.setattr(session, "Session", Spy)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    client = sqs_clients.sqs_client("http://127.0.0.1:4599", "localstack")
    assert made and made[0]["localstack_host"] == "127.0.0.1:4599"
    assert client.meta.endpoint_url == "http://127.0.0.1:4599"
    assert client.meta.region_name == sqs_clients.REGION


def test_moto_clients_are_plain_boto3_on_the_endpoint(monkeypatch):
    from localstack_client import session

    monkeypatch.setattr(session, "Session", lambda **kw: pytest.fail("moto's client went through localstack-client"))
    client = sqs_clients.sqs_client("http://127.0.0.1:4598", "moto")
    assert client.meta.endpoint_url == "http://127.0.0.1:4598"


def test_an_unknown_service_is_refused():
    with pytest.raises(ValueError, match="moto, localstack"):
        sqs_clients.sqs_client("http://127.0.0.1:1", "elasticmq")


def test_localstack_not_installed_names_the_extra_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(localstack, "localstack_installed", lambda: False)
    service = LocalStackSQS("sqs", port=1, workdir=tmp_path)
    with pytest.raises(ServiceError, match=r"pip install 'jobquake\[localstack\]'"):
        service.start()
    assert not service.is_running()


def test_localstack_runs_sqs_only_on_its_address_with_its_folders_in_the_run_folder(tmp_path):
    env = LocalStackSQS("sqs", port=4597, workdir=tmp_path).runtime_env()
    assert env["SERVICES"] == "sqs"
    assert env["GATEWAY_LISTEN"] == "127.0.0.1:4597"
    assert env["FILESYSTEM_ROOT"].startswith(str(tmp_path))
    assert env["OVERRIDE_IN_DOCKER"] == "0"  # else a machine that is a container sends it to /var/lib/localstack
