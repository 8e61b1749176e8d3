"""What a client of the proxy API has set: the state the server must show if nobody else changed it.

A client records each change it made (a proxy made or deleted, moved,
enabled or disabled, a toxic added or removed; ``reset`` enables every proxy
and removes every toxic). ``differences`` compares that with the proxies as
the server lists them: a proxy, toxic or setting the client did not make is
someone else's doing, what the harness reports as interference.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Made:
    """One proxy as its maker left it."""

    upstream: str
    enabled: bool = True
    toxics: set[str] = field(default_factory=set)


class ExpectedState:
    """The proxies one client made, as it last changed them."""

    def __init__(self) -> None:
        self.proxies: dict[str, Made] = {}

    def made(self, data: dict[str, Any]) -> None:
        self.proxies[data["name"]] = Made(data["upstream"], bool(data["enabled"]),
                                          {t["name"] for t in data.get("toxics") or ()})

    def changed(self, data: dict[str, Any]) -> None:
        """A proxy's answer to an update: its upstream and enabled state as set now."""
        if data["name"] in self.proxies:
            made = self.proxies[data["name"]]
            made.upstream, made.enabled = data["upstream"], bool(data["enabled"])

    def deleted(self, name: str) -> None:
        self.proxies.pop(name, None)

    def toxic(self, proxy: str, name: str, present: bool) -> None:
        if proxy in self.proxies:
            (self.proxies[proxy].toxics.add if present else self.proxies[proxy].toxics.discard)(name)

    def reset(self) -> None:
        for made in self.proxies.values():
            made.enabled, made.toxics = True, set()

    def differences(self, listed: dict[str, dict[str, Any]]) -> list[str]:
        """What the server shows that this client did not set (one sentence each)."""
        found = [f"proxy {name!r} ({data.get('listen')} -> {data.get('upstream')}) was made by someone else"
                 for name, data in listed.items() if name not in self.proxies]
        found += [f"proxy {name!r} was deleted by someone else" for name in self.proxies if name not in listed]
        for name, made in self.proxies.items():
            data = listed.get(name)
            if data is None:
                continue
            if data["upstream"] != made.upstream:
                found.append(f"proxy {name!r} was pointed at {data['upstream']} by someone else")
            if bool(data["enabled"]) != made.enabled:
                state = "enabled" if data["enabled"] else "disabled"
                found.append(f"proxy {name!r} was {state} by someone else")
            for toxic in data.get("toxics") or ():
                if toxic["name"] not in made.toxics:
                    found.append(f"toxic {toxic['name']!r} ({toxic['type']}, {toxic['stream']}) on proxy {name!r} "
                                 f"was set by someone else")
        return found
