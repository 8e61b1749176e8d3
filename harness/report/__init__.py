"""Reports of a run: JSON, JUnit properties, the terminal table, the HTML timeline.

Public API:

* ``write_json(path, results_per_test, meta=None)``, ``results_to_json``,
  ``read_json`` (``json_report.py``): ``results_per_test`` maps test ids to Verdicts.
* ``junit_properties(verdict, seed=None, artifacts_path=None) -> [(name, value)]``
  for ``record_property`` (``junit.py``).
* ``summary_lines(results_per_test, ascii=False) -> list[str]``: scenario ×
  invariant table for the terminal summary (``terminal.py``).
* ``render_html(history, verdict, snapshot, title) -> str``: self-contained
  HTML timeline (``html.py``).
* ``write_artifacts(dir, history, snapshot, verdict, title, seed=None, nodeid=None)``,
  ``load_artifacts(dir)``, ``find_artifact_dirs(path)`` and the folder layout
  (``artifacts.py``).
* ``report_main(argv) -> int``: ``jobquake report DIR`` (``rerun.py``).
"""
from __future__ import annotations

from harness.report.artifacts import Artifacts, find_artifact_dirs, load_artifacts, write_artifacts
from harness.report.html import render_html
from harness.report.json_report import read_json, results_to_json, write_json
from harness.report.junit import junit_properties
from harness.report.rerun import recheck, report_main
from harness.report.terminal import summary_lines

__all__ = [
    "Artifacts", "find_artifact_dirs", "junit_properties", "load_artifacts", "read_json",
    "recheck", "render_html", "report_main", "results_to_json", "summary_lines",
    "write_artifacts", "write_json",
]
