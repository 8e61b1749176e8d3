"""moto's SQS server runs on every moto the package accepts (``moto[server]>=5``)."""
from __future__ import annotations

import moto.moto_server.werkzeug_app as werkzeug_app
from werkzeug.serving import WSGIRequestHandler

from harness.stack.moto_main import request_handler


def test_moto_s_own_request_handler_is_used_where_it_has_one():
    assert request_handler() is werkzeug_app.MotoRequestHandler


def test_before_moto_5_2_which_has_none_werkzeug_s_serves(monkeypatch):
    monkeypatch.delattr(werkzeug_app, "MotoRequestHandler")  # as on moto 5.1.16
    assert request_handler() is WSGIRequestHandler
