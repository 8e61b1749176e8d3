"""OpenAI ``POST /v1/embeddings``: one deterministic vector per input.

Answer: ``{"object": "list", "data": [{"object": "embedding", "index",
"embedding"}], "model", "usage": {"prompt_tokens", "total_tokens"}}``.
The vector is drawn from a hash of its input (same text, same vector), with
``dimensions`` floats (default: the model's own size, 1536 when unknown);
``encoding_format: "base64"`` (what the official client asks for) packs them
as little-endian float32. Embeddings bill input tokens only.
"""
from __future__ import annotations

import base64
import hashlib
import random
import struct
from typing import Any

from harness.errors import ConfigError
from harness.paidapi.formats.base import Call, WireFormat
from harness.paidapi.formats.openai_common import openai_error, required_model
from harness.paidapi.provider import Answer

MODEL_DIMENSIONS = {"text-embedding-3-large": 3072}
DEFAULT_DIMENSIONS = 1536


class OpenAIEmbeddings(WireFormat):
    """The embeddings format."""

    name = "openai.embeddings"

    def parse(self, body: dict[str, Any]) -> Call:
        model = required_model(body)
        given = body.get("input")
        inputs = [given] if isinstance(given, str) else given
        if not isinstance(inputs, list) or not inputs or not all(isinstance(i, str) for i in inputs):
            raise ConfigError("'input' must be a string or a non-empty list of strings "
                              "(token arrays are not supported by the fake provider)", key="input")
        dimensions = body.get("dimensions", MODEL_DIMENSIONS.get(model, DEFAULT_DIMENSIONS))
        if not isinstance(dimensions, int) or isinstance(dimensions, bool) or dimensions < 1:
            raise ConfigError(f"'dimensions' must be a positive integer, got {dimensions!r}",
                              key="dimensions")
        encoding = body.get("encoding_format", "float")
        if encoding not in ("float", "base64"):
            raise ConfigError(f"'encoding_format' must be 'float' or 'base64', got {encoding!r}",
                              key="encoding_format")
        if body.get("stream"):
            raise ConfigError("embeddings do not stream", key="stream")
        return Call(prompt="\n".join(inputs), model=model, counts_output=False,
                    options={"inputs": inputs, "dimensions": dimensions, "encoding": encoding})

    def answer(self, call: Call, answer: Answer) -> dict[str, Any]:
        encode = _base64 if call.options["encoding"] == "base64" else list
        data = [{"object": "embedding", "index": n,
                 "embedding": encode(vector_for(text, call.options["dimensions"]))}
                for n, text in enumerate(call.options["inputs"])]
        tokens = answer.body["tokens_in"]
        return {"object": "list", "data": data, "model": call.model,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}

    def error(self, status: int, message: str, code: str | None = None) -> dict[str, Any]:
        return openai_error(status, message, code)


def vector_for(text: str, dimensions: int) -> list[float]:
    """The embedding of ``text``: unit-length, seeded by its hash."""
    rng = random.Random(hashlib.sha256(text.encode()).digest())
    vector = [rng.gauss(0.0, 1.0) for _ in range(dimensions)]
    norm = sum(v * v for v in vector) ** 0.5 or 1.0
    return [v / norm for v in vector]


def _base64(vector: list[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
