"""``jobquake init``: describe a user's project to jobquake without asking what can be read.

``scan`` runs the readers (``readers.READERS``: its pyproject, the Python
files of its own packages as syntax trees; nothing is imported or run) and
collects what they find in one ``Findings``: the Celery app, its tasks, the
SQLAlchemy tables and schema function, the job table, the environment
variables the code reads, the processes it can be run as.
``render`` turns those findings into a ``[tool.jobquake]`` section with
comments and a ``scenarios/`` folder holding the headline scenarios;
``write`` puts them in place, never over anything that exists. What could
not be inferred is written as a commented ``TODO(jobquake init)`` naming
the exact key, and listed on the terminal.
"""
from __future__ import annotations

from harness.scaffold.render import Scaffold, render
from harness.scaffold.scan import Findings, scan
from harness.scaffold.write import InitError, write

__all__ = ["Findings", "InitError", "Scaffold", "render", "scan", "write"]
