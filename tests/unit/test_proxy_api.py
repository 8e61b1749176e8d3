"""The HTTP API itself: Toxiproxy's routes, JSON shapes, status codes and error bodies."""
from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from harness.proxy import ProxyServer
from tests.common.proxy import echo, proxy_server, refused, round_trip  # noqa: F401  (fixtures)


@pytest.fixture
def api(proxy_server: ProxyServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=proxy_server.url, timeout=5) as http:
        yield http


def assert_error(response: httpx.Response, status: int, message: str) -> None:
    """Toxiproxy's error shape; ``message`` must start the error text."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["status"] == status
    assert body["error"].startswith(message), body["error"]


def create(api: httpx.Client, name: str = "svc", upstream: str = "127.0.0.1:9", **extra: Any) -> dict:
    response = api.post("/proxies", json={"name": name, "upstream": upstream, **extra})
    assert response.status_code == 201, response.text
    return response.json()


def test_create_answers_201_with_the_proxy_and_its_real_port(api: httpx.Client) -> None:
    body = create(api, listen="127.0.0.1:0")
    assert set(body) == {"name", "listen", "upstream", "enabled", "toxics", "jobquake_bytes"}
    assert body["jobquake_bytes"] == {"upstream": 0, "downstream": 0}  # the extension: nothing passed yet
    assert body["name"] == "svc" and body["upstream"] == "127.0.0.1:9"
    assert body["enabled"] is True and body["toxics"] == []
    host, _, port = body["listen"].rpartition(":")
    assert host == "127.0.0.1" and int(port) > 0


def test_listen_defaults_to_a_free_loopback_port(api: httpx.Client) -> None:
    assert create(api)["listen"].startswith("127.0.0.1:")


@pytest.mark.parametrize("listen", ["localhost:0", "127.0.0.1:0", "[::1]:0"])
def test_loopback_listen_addresses_are_accepted(api: httpx.Client, listen: str) -> None:
    body = create(api, listen=listen)
    assert body["listen"].startswith("[::1]:" if "::1" in listen else "127.0.0.1:")


@pytest.mark.parametrize("listen", ["0.0.0.0:0", "192.168.1.10:8000", "[::]:0", "example.com:80", ":8080"])
def test_a_listen_address_off_loopback_is_refused(api: httpx.Client, listen: str) -> None:
    response = api.post("/proxies", json={"name": "svc", "upstream": "127.0.0.1:9", "listen": listen})
    if listen == ":8080":
        assert_error(response, 400, "bad request body: listen address ':8080' is not host:port")
    else:
        assert_error(response, 400, f"listen address {listen!r} is not on loopback")
    assert api.get("/proxies").json() == {}


def test_a_listen_port_in_use_is_a_500_and_no_proxy(api: httpx.Client) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        response = api.post("/proxies", json={"name": "svc", "upstream": "127.0.0.1:9",
                                              "listen": f"127.0.0.1:{port}"})
    assert_error(response, 500, f"listen tcp 127.0.0.1:{port}: ")
    assert api.get("/proxies/svc").status_code == 404


def test_a_second_proxy_with_the_same_name_is_409(api: httpx.Client) -> None:
    create(api)
    assert_error(api.post("/proxies", json={"name": "svc", "upstream": "127.0.0.1:9"}), 409,
                 "proxy already exists")


@pytest.mark.parametrize("body, message", [
    ({"upstream": "127.0.0.1:9"}, "missing required field: name"),
    ({"name": "svc"}, "missing required field: upstream"),
    ({"name": "", "upstream": "127.0.0.1:9"}, "missing required field: name"),
    ({"name": 3, "upstream": "127.0.0.1:9"}, "bad request body: name must be a string"),
    ({"name": "svc", "upstream": "nowhere"}, "bad request body: upstream address 'nowhere' is not host:port"),
    ({"name": "svc", "upstream": "127.0.0.1:9", "enabled": "yes"}, "bad request body: enabled must be"),
    ([1, 2], "bad request body: expected a JSON object"),
])
def test_an_invalid_proxy_is_400(api: httpx.Client, body: Any, message: str) -> None:
    assert_error(api.post("/proxies", json=body), 400, message)


@pytest.mark.parametrize("method, path", [
    ("POST", "/proxies"),
    ("POST", "/populate"),
    ("POST", "/proxies/svc"),
    ("POST", "/proxies/svc/toxics"),
    ("POST", "/proxies/svc/toxics/latency_downstream"),
])
def test_a_body_that_is_not_json_is_400(api: httpx.Client, method: str, path: str) -> None:
    create(api)
    api.post("/proxies/svc/toxics", json={"type": "latency"})
    assert_error(api.request(method, path, content=b"{not json"), 400, "bad request body: ")


@pytest.mark.parametrize("method, path", [
    ("GET", "/proxies/ghost"),
    ("POST", "/proxies/ghost"),
    ("DELETE", "/proxies/ghost"),
    ("GET", "/proxies/ghost/toxics"),
    ("POST", "/proxies/ghost/toxics"),
    ("GET", "/proxies/ghost/toxics/any"),
    ("DELETE", "/proxies/ghost/toxics/any"),
])
def test_an_unknown_proxy_is_404(api: httpx.Client, method: str, path: str) -> None:
    assert_error(api.request(method, path, json={"type": "latency"}), 404, "proxy not found")


def test_get_proxies_lists_every_proxy_by_name_with_its_toxics(api: httpx.Client) -> None:
    create(api, "a")
    create(api, "b")
    api.post("/proxies/b/toxics", json={"type": "latency", "stream": "downstream"})
    api.post("/proxies/b/toxics", json={"type": "timeout", "stream": "upstream"})
    listing = api.get("/proxies").json()
    assert set(listing) == {"a", "b"}
    assert listing["a"]["toxics"] == []
    # Upstream toxics first, as Toxiproxy lists its chains.
    assert [t["name"] for t in listing["b"]["toxics"]] == ["timeout_upstream", "latency_downstream"]
    assert api.get("/proxies/b").json() == listing["b"]


def test_update_disables_and_enables_a_proxy(api: httpx.Client, echo) -> None:
    body = create(api, upstream=echo.address)
    port = int(body["listen"].rpartition(":")[2])
    disabled = api.post("/proxies/svc", json={"enabled": False})
    assert disabled.status_code == 200 and disabled.json()["enabled"] is False
    assert refused(port)
    enabled = api.patch("/proxies/svc", json={"enabled": True})
    assert enabled.status_code == 200 and enabled.json()["listen"] == body["listen"]
    assert round_trip(port) == b"ping"


def test_update_refuses_a_listen_address_off_loopback_and_keeps_the_proxy(api: httpx.Client) -> None:
    body = create(api)
    assert_error(api.post("/proxies/svc", json={"listen": "0.0.0.0:0"}), 400, "listen address '0.0.0.0:0'")
    assert api.get("/proxies/svc").json() == body


def test_delete_answers_204_and_stops_listening(api: httpx.Client) -> None:
    port = int(create(api)["listen"].rpartition(":")[2])
    response = api.delete("/proxies/svc")
    assert response.status_code == 204 and response.content == b""
    assert refused(port)
    assert api.get("/proxies").json() == {}


def test_create_toxic_answers_200_with_toxiproxy_defaults(api: httpx.Client) -> None:
    create(api)
    response = api.post("/proxies/svc/toxics", json={"type": "latency", "attributes": {"latency": 5}})
    assert response.status_code == 200
    assert response.json() == {"name": "latency_downstream", "type": "latency", "stream": "downstream",
                               "toxicity": 1.0, "attributes": {"latency": 5, "jitter": 0},
                               "jobquake_bytes": 0}
    assert api.get("/proxies/svc/toxics/latency_downstream").json() == response.json()
    assert api.get("/proxies/svc/toxics").json() == [response.json()]


@pytest.mark.parametrize("toxic_type, attributes", [
    ("latency", {"latency": 0, "jitter": 0}),
    ("bandwidth", {"rate": 0}),
    ("slow_close", {"delay": 0}),
    ("timeout", {"timeout": 0}),
    ("reset_peer", {"timeout": 0}),
    ("limit_data", {"bytes": 0}),
])
def test_every_toxic_type_has_its_attributes_with_zero_defaults(api: httpx.Client, toxic_type: str,
                                                                 attributes: dict) -> None:
    create(api)
    body = api.post("/proxies/svc/toxics", json={"type": toxic_type, "stream": "UPSTREAM"}).json()
    assert body["attributes"] == attributes
    assert body["stream"] == "upstream" and body["name"] == f"{toxic_type}_upstream"


def test_slicer_takes_its_three_attributes(api: httpx.Client) -> None:
    create(api)
    attributes = {"average_size": 10, "size_variation": 3, "delay": 100}
    body = api.post("/proxies/svc/toxics", json={"type": "slicer", "name": "s", "toxicity": 0.25,
                                                 "attributes": attributes}).json()
    assert body == {"name": "s", "type": "slicer", "stream": "downstream", "toxicity": 0.25,
                    "attributes": attributes, "jobquake_bytes": 0}


def test_a_second_toxic_with_the_same_name_is_409(api: httpx.Client) -> None:
    create(api)
    api.post("/proxies/svc/toxics", json={"type": "latency"})
    assert_error(api.post("/proxies/svc/toxics", json={"type": "timeout", "name": "latency_downstream"}),
                 409, "toxic already exists")


@pytest.mark.parametrize("method", ["GET", "POST", "DELETE"])
def test_an_unknown_toxic_is_404(api: httpx.Client, method: str) -> None:
    create(api)
    assert_error(api.request(method, "/proxies/svc/toxics/ghost", json={}), 404, "toxic not found")


@pytest.mark.parametrize("body, message", [
    ({"type": "earthquake"}, "invalid toxic type"),
    ({}, "invalid toxic type"),
    ({"type": "latency", "stream": "sideways"}, "stream was invalid, can be either upstream or downstream"),
    ({"type": "latency", "attributes": {"latency": -1}}, "bad request body: attribute 'latency' of latency"),
    ({"type": "latency", "attributes": {"latency": "100"}}, "bad request body: attribute 'latency'"),
    ({"type": "latency", "attributes": {"latency": 1.5}}, "bad request body: attribute 'latency'"),
    ({"type": "latency", "attributes": {"latency": True}}, "bad request body: attribute 'latency'"),
    ({"type": "latency", "attributes": {"latncy": 1}}, "bad request body: latency has no attribute 'latncy'"),
    ({"type": "latency", "attributes": [1]}, "bad request body: attributes must be a JSON object"),
    ({"type": "latency", "toxicity": 1.5}, "bad request body: toxicity must be a number from 0 to 1"),
    ({"type": "latency", "toxicity": "all"}, "bad request body: toxicity must be a number from 0 to 1"),
    ({"type": "slicer"}, "bad request body: slicer needs average_size >= 1"),
    ({"type": "slicer", "attributes": {"average_size": 5, "size_variation": 5}},
     "bad request body: slicer needs size_variation < average_size"),
])
def test_an_invalid_toxic_is_400_and_not_added(api: httpx.Client, body: dict, message: str) -> None:
    create(api)
    assert_error(api.post("/proxies/svc/toxics", json=body), 400, message)
    assert api.get("/proxies/svc/toxics").json() == []


def test_update_toxic_changes_only_what_it_is_given(api: httpx.Client) -> None:
    create(api)
    api.post("/proxies/svc/toxics", json={"type": "latency", "attributes": {"latency": 5, "jitter": 2}})
    body = api.post("/proxies/svc/toxics/latency_downstream", json={"attributes": {"latency": 50}}).json()
    assert body["attributes"] == {"latency": 50, "jitter": 2} and body["toxicity"] == 1.0
    body = api.patch("/proxies/svc/toxics/latency_downstream", json={"toxicity": 0.5}).json()
    assert body["attributes"] == {"latency": 50, "jitter": 2} and body["toxicity"] == 0.5


def test_a_refused_toxic_update_leaves_the_toxic_as_it_was(api: httpx.Client) -> None:
    create(api)
    before = api.post("/proxies/svc/toxics", json={"type": "latency", "attributes": {"latency": 5}}).json()
    response = api.post("/proxies/svc/toxics/latency_downstream",
                        json={"attributes": {"latency": 7}, "toxicity": 2})
    assert_error(response, 400, "bad request body: toxicity")
    assert api.get("/proxies/svc/toxics/latency_downstream").json() == before


def test_delete_toxic_answers_204(api: httpx.Client) -> None:
    create(api)
    api.post("/proxies/svc/toxics", json={"type": "latency"})
    response = api.delete("/proxies/svc/toxics/latency_downstream")
    assert response.status_code == 204 and response.content == b""
    assert api.get("/proxies/svc/toxics").json() == []


def test_reset_answers_204_removes_toxics_and_enables_proxies(api: httpx.Client) -> None:
    create(api, "a")
    create(api, "b", enabled=False)
    api.post("/proxies/a/toxics", json={"type": "latency"})
    response = api.post("/reset")
    assert response.status_code == 204
    listing = api.get("/proxies").json()
    assert all(p["enabled"] and p["toxics"] == [] for p in listing.values())


def test_populate_answers_201_and_creates_the_proxies(api: httpx.Client) -> None:
    response = api.post("/populate", json=[{"name": "a", "upstream": "127.0.0.1:9"},
                                           {"name": "b", "upstream": "127.0.0.1:10", "enabled": False}])
    assert response.status_code == 201
    proxies = response.json()["proxies"]
    assert [(p["name"], p["enabled"]) for p in proxies] == [("a", True), ("b", False)]
    assert set(api.get("/proxies").json()) == {"a", "b"}


def test_populate_keeps_a_matching_proxy_and_replaces_a_changed_one(api: httpx.Client) -> None:
    first = create(api, "a", listen="127.0.0.1:0")
    api.post("/proxies/a/toxics", json={"type": "latency"})
    same = {"name": "a", "upstream": "127.0.0.1:9", "listen": first["listen"]}
    kept = api.post("/populate", json=[same]).json()["proxies"][0]
    assert kept == api.get("/proxies/a").json() and len(kept["toxics"]) == 1  # untouched
    replaced = api.post("/populate", json=[{**same, "upstream": "127.0.0.1:10"}]).json()["proxies"][0]
    assert replaced["upstream"] == "127.0.0.1:10" and replaced["toxics"] == []


@pytest.mark.parametrize("body, message", [
    ({"name": "a", "upstream": "127.0.0.1:9"}, "bad request body: expected a JSON array of proxies"),
    ([{"name": "a", "upstream": "127.0.0.1:9"}, {"upstream": "127.0.0.1:9"}],
     "missing required field: name at proxy 2"),
    ([{"name": "a", "upstream": "127.0.0.1:9"}, {"name": "a", "upstream": "127.0.0.1:10"}],
     "bad request body: duplicate proxy name 'a'"),
    ([{"name": "a", "upstream": "127.0.0.1:9", "listen": "0.0.0.0:0"}], "listen address '0.0.0.0:0'"),
])
def test_an_invalid_populate_is_400_and_changes_nothing(api: httpx.Client, body: Any, message: str) -> None:
    assert_error(api.post("/populate", json=body), 400, message)
    assert api.get("/proxies").json() == {}


def test_a_populate_that_fails_midway_reports_what_was_applied(api: httpx.Client) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = f"127.0.0.1:{taken.getsockname()[1]}"
        response = api.post("/populate", json=[{"name": "a", "upstream": "127.0.0.1:9"},
                                               {"name": "b", "upstream": "127.0.0.1:9", "listen": busy}])
    assert_error(response, 500, f"listen tcp {busy}")
    assert [p["name"] for p in response.json()["proxies"]] == ["a"]


def test_version_answers_a_version_string(api: httpx.Client) -> None:
    response = api.get("/version")
    assert response.status_code == 200 and isinstance(response.json()["version"], str)


def test_browsers_are_refused(api: httpx.Client) -> None:
    response = api.get("/proxies", headers={"User-Agent": "Mozilla/5.0 (X11; Linux x86_64)"})
    assert_error(response, 403, "User agent not allowed")


def test_unknown_routes_and_methods_answer_in_the_error_shape(api: httpx.Client) -> None:
    assert_error(api.get("/nowhere"), 404, "not found")
    assert_error(api.put("/proxies"), 405, "method not allowed")


@pytest.mark.parametrize("header", [{"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"},
                                    {"Sec-Fetch-Mode": "no-cors"}])
def test_requests_a_browser_marked_are_refused_whatever_the_user_agent(api: httpx.Client, header) -> None:
    response = api.post("/reset", headers={"User-Agent": "curl/8.0", **header})
    assert_error(response, 403, "User agent not allowed")
