"""The values a template can use for an app that reads its broker or database as separate settings."""
from harness.stack.stack import url_parts


def test_a_url_gives_its_host_port_user_password_and_name():
    assert url_parts("redis://:s3cret@127.0.0.1:6400/0", "redis") == {
        "redis_host": "127.0.0.1", "redis_port": 6400, "redis_user": "", "redis_password": "s3cret", "redis_name": "0"}
    assert url_parts("postgresql://postgres:pw@127.0.0.1:5500/app", "database")["database_name"] == "app"
