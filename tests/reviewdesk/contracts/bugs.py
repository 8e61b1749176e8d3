"""Known mistakes this app can be switched into, one at a time, for its own tests.

``REVIEWDESK_BUG=<name>`` in a process's environment turns one on. Each is
a mistake that reads well in review; the app is right without them.
"""
from django.conf import settings

BUGS = {
    "enqueue-in-transaction": "the review is queued inside its transaction, before the commit: "
                              "a fast worker finds no row and the review stays queued",
    "queue-after-save": "the review is saved, then marked queued and sent in a second step that "
                        "can fail after the first committed",
    "swallow-soft-limit": "the per-clause loop catches every exception, the soft time limit included",
    "no-idempotency-key": "the model call carries no idempotency key: a retried review is billed again",
    "sweep-one-transaction": "the sweep handles every stale review in one transaction: one bad row stops all",
    "no-model-timeout": "the model call has no deadline: a provider that never answers holds the worker",
}


def bug(name: str) -> bool:
    """True when this process runs with bug ``name`` switched on."""
    if name not in BUGS:
        raise KeyError(f"unknown bug {name!r}")
    return settings.REVIEWDESK_BUG == name
