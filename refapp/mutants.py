"""Named mutants: each one puts a single catalogued bug back into refapp.

``REFAPP_MUTANT=name[,name...]`` switches them on for a process. The code
asks ``mutant("name")`` right where the defence lives, so reading a module
shows the right shape and its wrong twin side by side. An unknown name is an
error when the settings are read, which every entry point does at start.
``python -m refapp.mutants`` lists them.
"""
from __future__ import annotations

import sys

ENV_VAR = "REFAPP_MUTANT"

MUTANTS: dict[str, str] = {
    "swallow-soft-limit": "the per-document except Exception also catches SoftTimeLimitExceeded and goes on",
    "helper-swallows-abort": "the per-document helper's catch-all swallows the soft limit one level down",
    "sweep-no-isolation": "the overdue sweep stops at the first row that raises",
    "sweep-swallows-deadline": "the sweep's per-row isolation also swallows the soft time limit",
    "cli-budget-wins": "the worker command adds a blanket --soft-time-limit that beats the declared default",
    "dead-config-deadline": "REFAPP_MODEL_DEADLINE_S is read into settings but the model client ignores it",
    "no-deadline": "model calls are made without any timeout",
    "timeout-unlabelled": "a model-call timeout is reported as a generic 'error:' reason",
    "blocking-call-on-loop": "the SQS consumer runs the job's blocking work on its event loop",
    "abandoned-work-writes": "writes and paid calls skip the fencing token and the cancel flag",
    "no-sweeper": "the sweeper finds nothing: abandoned jobs stay where they are",
    "acks-early": "Celery acknowledges a task before it runs (acks_late off)",
    "dlq-before-code-limit": "the SQS queue's max-receives equals the code's max attempts",
    "heartbeat-forever": "the SQS heartbeat extends visibility with no wall-clock cap",
    "fresh-idempotency-key": "each attempt sends a new idempotency key to the paid API",
    "check-after-pay": "'already done?' is asked only before saving, after paying",
    "dual-write": "the API saves the job, then enqueues it separately instead of through the outbox",
    "outbox-mark-before-send": "the relay marks an outbox row sent before sending it",
    "consumer-not-idempotent": "the job and its steps do not ask 'already done?' before running",
    "event-before-commit": "the final status event is published before the final DB write",
    "unstable-job-id": "every submission gets a fresh job id instead of one from (project, file)",
    "reference-table-rescan": "the category table is re-read for every document and row",
}


class UnknownMutant(ValueError):
    """A mutant name that refapp does not define."""


def parse(text: str) -> frozenset[str]:
    """The set of mutant names in a comma-separated string; UnknownMutant for a typo."""
    names = frozenset(part.strip() for part in text.split(",") if part.strip())
    unknown = sorted(names - MUTANTS.keys())
    if unknown:
        raise UnknownMutant(
            f"{ENV_VAR}: unknown mutant(s) {', '.join(unknown)}; known mutants: {', '.join(MUTANTS)}"
        )
    return names


def mutant(name: str) -> bool:
    """True when mutant ``name`` is switched on in this process."""
    if name not in MUTANTS:  # a typo here would silently keep the right shape
        raise KeyError(f"refapp defines no mutant {name!r}")
    from refapp import settings

    return name in settings.get().mutants


def main() -> int:
    """Print every mutant and what it breaks."""
    width = max(map(len, MUTANTS))
    for name, description in MUTANTS.items():
        print(f"{name:<{width}}  {description}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
