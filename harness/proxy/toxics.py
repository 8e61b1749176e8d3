"""Toxic definitions: the types Toxiproxy knows, their attributes, defaults and validation.

A toxic is plain data here; what it does to a live connection is in
``stages.py``. Field names, defaults (every attribute defaults to 0, as
Go's zero values do in Toxiproxy) and error messages follow Toxiproxy's API
so that the same client code works against either server.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

UPSTREAM = "upstream"  # client -> server
DOWNSTREAM = "downstream"  # server -> client
STREAMS = (UPSTREAM, DOWNSTREAM)

# type -> attribute -> default. Every attribute is a non-negative integer.
ATTRIBUTES: dict[str, dict[str, int]] = {
    "latency": {"latency": 0, "jitter": 0},  # milliseconds
    "bandwidth": {"rate": 0},  # KB/s (1 KB = 1000 bytes, as Toxiproxy)
    "slow_close": {"delay": 0},  # milliseconds
    "timeout": {"timeout": 0},  # milliseconds; 0 = hold until removed
    "reset_peer": {"timeout": 0},  # milliseconds
    "slicer": {"average_size": 0, "size_variation": 0, "delay": 0},  # bytes, bytes, µs
    "limit_data": {"bytes": 0},
}

# Toxiproxy's own messages, so clients that match on them keep working.
INVALID_STREAM = "stream was invalid, can be either upstream or downstream"
INVALID_TYPE = "invalid toxic type"
BAD_BODY = "bad request body"


class InvalidToxicError(ValueError):
    """A toxic definition the API must refuse with 400."""

    status = 400


# A jobquake extension of Toxiproxy's API (which counts nothing): bytes that went
# through a proxy ({"upstream": n, "downstream": n}) and through a toxic while it
# was set (n). Read-only: ignored in request bodies. Clients must treat it as
# optional, since a real Toxiproxy does not send it.
TRAFFIC = "jobquake_bytes"


@dataclass
class Toxic:
    """One toxic on a proxy; live connections read its attributes on every chunk."""

    name: str
    type: str
    stream: str = DOWNSTREAM
    toxicity: float = 1.0
    attributes: dict[str, int] = field(default_factory=dict)
    # bytes that reached it on a connection where it is active (a jobquake extension, see TRAFFIC)
    bytes_seen: int = field(default=0, compare=False)

    def to_json(self) -> dict[str, Any]:
        """The toxic as Toxiproxy's API shows it, plus the read-only ``TRAFFIC`` count."""
        return {
            "name": self.name,
            "type": self.type,
            "stream": self.stream,
            "toxicity": self.toxicity,
            "attributes": dict(self.attributes),
            TRAFFIC: self.bytes_seen,
        }


def parse_toxic(body: Any) -> Toxic:
    """Build a toxic from a create request, filling Toxiproxy's defaults."""
    if not isinstance(body, dict):
        raise InvalidToxicError(f"{BAD_BODY}: expected a JSON object")
    stream = body.get("stream", DOWNSTREAM)
    if not isinstance(stream, str) or stream.lower() not in STREAMS:
        raise InvalidToxicError(INVALID_STREAM)
    stream = stream.lower()
    toxic_type = body.get("type")
    if toxic_type not in ATTRIBUTES:
        raise InvalidToxicError(INVALID_TYPE)
    name = body.get("name") or f"{toxic_type}_{stream}"
    if not isinstance(name, str):
        raise InvalidToxicError(f"{BAD_BODY}: name must be a string")
    toxicity = _toxicity(body.get("toxicity", 1.0))
    attributes = _attributes(toxic_type, dict(ATTRIBUTES[toxic_type]), body.get("attributes"))
    return Toxic(name, toxic_type, stream, toxicity, attributes)


def apply_update(toxic: Toxic, body: Any) -> None:
    """Change a toxic's attributes and/or toxicity; absent fields keep their value.

    Everything is validated before anything changes, so a refused update
    leaves the toxic as it was.
    """
    if not isinstance(body, dict):
        raise InvalidToxicError(f"{BAD_BODY}: expected a JSON object")
    toxicity = _toxicity(body.get("toxicity", toxic.toxicity))
    attributes = _attributes(toxic.type, dict(toxic.attributes), body.get("attributes"))
    toxic.toxicity = toxicity
    toxic.attributes = attributes


def _toxicity(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise InvalidToxicError(f"{BAD_BODY}: toxicity must be a number from 0 to 1, got {value!r}")
    return float(value)


def _attributes(toxic_type: str, base: dict[str, int], given: Any) -> dict[str, int]:
    if given is None:
        given = {}
    if not isinstance(given, dict):
        raise InvalidToxicError(f"{BAD_BODY}: attributes must be a JSON object")
    for key, value in given.items():
        if key not in base:
            known = ", ".join(sorted(base))
            raise InvalidToxicError(f"{BAD_BODY}: {toxic_type} has no attribute {key!r} (known: {known})")
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InvalidToxicError(
                f"{BAD_BODY}: attribute {key!r} of {toxic_type} must be a non-negative integer, got {value!r}"
            )
        base[key] = value
    if toxic_type == "slicer":
        _check_slicer(base)
    return base


def _check_slicer(attributes: dict[str, int]) -> None:
    # Toxiproxy crashes on these (division of a chunk into zero-size slices);
    # refusing them up front is the only useful answer.
    if attributes["average_size"] < 1:
        raise InvalidToxicError(f"{BAD_BODY}: slicer needs average_size >= 1")
    if attributes["size_variation"] >= attributes["average_size"]:
        raise InvalidToxicError(f"{BAD_BODY}: slicer needs size_variation < average_size")
