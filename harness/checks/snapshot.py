"""The final snapshot now lives in ``harness.evidence``; this name stays for code written against it."""
from harness.evidence.snapshot import DEFAULT_TERMINAL_STATES, JobRow, Snapshot

__all__ = ["DEFAULT_TERMINAL_STATES", "JobRow", "Snapshot"]
