"""``python -m harness.report DIR``: the same as ``jobquake report DIR``."""
from __future__ import annotations

import sys

from harness.report.rerun import report_main

if __name__ == "__main__":
    sys.exit(report_main())
