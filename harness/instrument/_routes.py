"""Which outgoing URLs are paid calls, and where the fake paid API serves each.

A call is paid when its URL starts with the paid API's own URL (an app
whose base URL variable jobquake set), or with a model provider's public
address, whatever the code hard-codes there: OpenAI, Anthropic, OpenRouter
and other OpenAI-compatible hosts, Ollama's default local address, plus the
``paid_hosts`` of the config. Such a call is sent to the fake paid API
instead, its path mapped to the one the fake serves (OpenRouter's
``/api/v1/chat/completions`` is ``/v1/chat/completions``).
"""
from __future__ import annotations

import json
from typing import Any, Mapping

from harness.setting_checks import checks_setting

# where each provider's clients send calls -> the path prefix the fake paid API serves them under
KNOWN_PROVIDERS: dict[str, str] = {
    "https://api.openai.com": "",
    "https://api.anthropic.com": "",
    "https://openrouter.ai/api": "",
    "https://api.groq.com/openai": "",
    "https://api.together.xyz": "",
    "https://api.mistral.ai": "",
    "https://api.deepseek.com/v1": "/v1",
    "https://api.deepseek.com": "/v1",
    "https://api.fireworks.ai/inference": "",
    "https://api.x.ai": "",
    "https://api.perplexity.ai": "/v1",
    "https://generativelanguage.googleapis.com/v1beta/openai": "/v1",
    # Ollama's default address (its /api/chat, /api/generate and OpenAI-compatible /v1 routes)
    "http://localhost:11434": "",
    "http://127.0.0.1:11434": "",
}
DEFAULT_PORTS = {"https": "443", "http": "80"}


def parse_paid_hosts(raw: str) -> dict[str, str]:
    """The config's ``paid_hosts`` as the harness passes them (JSON: a list of URL prefixes, or a
    table of URL prefix -> the fake's path prefix); ValueError naming what is wrong."""
    if not raw:
        return {}
    value = json.loads(raw)
    if isinstance(value, list):
        value = {prefix: "" for prefix in value}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str)
                                                 for k, v in value.items()):
        raise ValueError(f"paid_hosts must be a list of URL prefixes or a table of prefix -> path, got {raw!r}")
    bad = [k for k in value if not k.startswith(("http://", "https://"))]
    if bad:
        raise ValueError(f"paid_hosts: {bad[0]!r} is not a URL prefix (http://host[:port][/path])")
    return dict(value)


@checks_setting("paid_hosts")
def _check(value: Any) -> str | None:
    try:
        parse_paid_hosts(json.dumps(value))
    except ValueError as exc:
        return str(exc)
    return None


class Routes:
    """Maps a paid call's URL to the fake paid API's URL for it."""

    def __init__(self, paidapi_url: str, extra: Mapping[str, str] | None = None):
        self.paidapi = tuple(u.rstrip("/") for u in paidapi_url.split() if u)
        table = {**KNOWN_PROVIDERS, **(extra or {})} if self.paidapi else {}
        # longest prefix first: api.deepseek.com/v1 before api.deepseek.com
        self.providers = sorted(((_normal(k), v.rstrip("/")) for k, v in table.items()),
                                key=lambda item: -len(item[0]))

    def target(self, url: object) -> str | None:
        """The URL to send a paid call to (the URL itself when it is already the paid API's);
        None when ``url`` is no paid call."""
        text = str(url)
        if self.paidapi and text.startswith(self.paidapi):
            return text
        if not self.providers:
            return None
        normal = _normal(text)
        for prefix, path in self.providers:
            if normal.startswith(prefix) and normal[len(prefix):len(prefix) + 1] in ("", "/", "?"):
                return self.paidapi[0] + path + normal[len(prefix):]
        return None


def _normal(url: str) -> str:
    """``url`` with its scheme and host in lower case and a default port left out."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    host, slash, path = rest.partition("/")
    host = host.lower()
    name, colon, port = host.rpartition(":")
    if colon and port == DEFAULT_PORTS.get(scheme.lower()):
        host = name
    return f"{scheme.lower()}://{host}{slash}{path}"
