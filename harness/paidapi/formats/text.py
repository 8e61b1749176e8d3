"""Text helpers every format uses: message text, streamed pieces, ids."""
from __future__ import annotations

from typing import Any

from harness.errors import ConfigError
from harness.paidapi.pricing import CHARS_PER_TOKEN


def content_text(content: Any, where: str) -> str:
    """The text of a message content: a string, or a list of text parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    raise ConfigError(f"{where}: content must be a string or a list of parts, got {content!r}",
                      key="content")


def pieces_of(text: str) -> list[str]:
    """The text as the model streams it: one piece per token (4 characters)."""
    return [text[i:i + CHARS_PER_TOKEN] for i in range(0, len(text), CHARS_PER_TOKEN)] or [""]


def call_suffix(call_id: Any) -> str:
    """The id part that ties an answer to its ledger record (``...-jq<call_id>``)."""
    return f"jq{call_id}"
