"""Who a paid call is for: job, step and attempt, from what the app already sends.

In order:

1. headers ``X-Job-Id`` / ``X-Step`` / ``X-Attempt`` (what an app labels
   itself, or what the harness's instrumentation adds): ``attributed_by``
   is ``"headers"``;
2. else the idempotency key (header ``Idempotency-Key``, or the configured
   ``call_key_header``) matched against the configured ``call_key`` pattern,
   e.g. ``"sum:{job_id}:{step}"``: ``attributed_by`` is ``"key"``. A key that
   does not match leaves the call unattributed (recorded, never dropped).
   A matching key also fills the fields the headers leave out;
3. a step still unknown defaults to ``"body-" + sha256(canonical body)[:12]``,
   the same for a call and its retry, whether streamed or not.

A call whose job stays unknown is unattributed (``job_id`` None).
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Mapping

from harness.errors import ConfigError
from harness.setting_checks import checks_setting

KEY_FIELDS = ("job_id", "step", "attempt")
DEFAULT_KEY_HEADER = "Idempotency-Key"
# Fields that say how the answer travels, not what is asked: left out of the body hash.
_TRANSPORT_FIELDS = ("stream", "stream_options")


class CallKeyPattern:
    """A ``call_key`` template such as ``"sum:{job_id}:{step}"``, matched against keys."""

    def __init__(self, template: str) -> None:
        self.template = template
        self._regex = re.compile(_template_regex(template), re.DOTALL)

    def match(self, key: str) -> dict[str, str] | None:
        """The fields the key carries, or None when it does not fit the pattern."""
        found = self._regex.fullmatch(key)
        return None if found is None else found.groupdict()



@checks_setting("call_key")
def call_key_problem(template: str) -> str | None:
    """Why ``template`` cannot be a ``call_key`` pattern; None when it can."""
    try:
        CallKeyPattern(template)
    except ConfigError as exc:
        return str(exc)
    return None

def _template_regex(template: str) -> str:
    parts = re.split(r"\{([^{}]*)\}", template)
    names = parts[1::2]
    unknown = sorted(set(names) - set(KEY_FIELDS))
    if unknown or "job_id" not in names or len(names) != len(set(names)):
        raise ConfigError(
            f"call_key = {template!r}: use {{job_id}} once, and optionally {{step}} and "
            f"{{attempt}} once each (e.g. 'sum:{{job_id}}:{{step}}'); "
            f"unknown fields: {unknown or 'none'}", key="call_key")
    regex = ""
    for index, part in enumerate(parts):
        if index % 2 == 0:
            regex += re.escape(part)
        else:
            regex += r"(?P<attempt>\d+)" if part == "attempt" else f"(?P<{part}>.+?)"
    return regex


@dataclass(frozen=True)
class Attribution:
    """The labels of one call and how they were found."""

    job_id: str | None
    step: str | None
    attempt: int | None
    attributed_by: str | None  # "headers" | "key" | None


def default_step(body: Mapping[str, Any]) -> str:
    """``body-<12 hex>``: a stable hash of the request body, stream flags left out."""
    asked = {k: v for k, v in body.items() if k not in _TRANSPORT_FIELDS}
    canonical = json.dumps(asked, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "body-" + hashlib.sha256(canonical.encode()).hexdigest()[:12]


def attribute(labels: Mapping[str, str | None], key: str | None,
              pattern: CallKeyPattern | None, body: Mapping[str, Any]) -> Attribution:
    """Attribute a call from its header ``labels`` (job_id/step/attempt) or its ``key``.

    Headers win field by field; a matching key fills the fields they leave out
    (e.g. the job from a header, the step from the key).
    """
    parsed = pattern.match(key) if key is not None and pattern is not None else None
    found = {**(parsed or {}), **{name: value for name, value in labels.items() if value is not None}}
    by = "headers" if labels.get("job_id") is not None else ("key" if parsed else None)
    attempt = found.get("attempt")
    if attempt is not None and not str(attempt).lstrip("-").isdigit():
        raise ConfigError(f"attempt must be an integer, got {attempt!r}", key="attempt")
    return Attribution(
        job_id=found.get("job_id"), step=found.get("step") or default_step(body),
        attempt=None if attempt is None else int(attempt), attributed_by=by,
    )
