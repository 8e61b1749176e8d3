"""Every ``JOBQUAKE_*`` variable the project's own commands set is one the configuration knows.

The plugin reads every ``JOBQUAKE_*`` variable in its environment as a setting and fails the session
on an unknown one, so a Makefile target or CI stage that sets a variable of that prefix for its own
use stops every test that runs after it.
"""
import re
from pathlib import Path

from harness.config.load import env_name
from harness.config.options import OPTIONS, RESERVED_ENV

ROOT = Path(__file__).resolve().parents[2]
SETTERS = [ROOT / "Makefile", ROOT / ".ci" / "run", *sorted((ROOT / "scripts").glob("*.sh"))]
# `NAME=value cmd`, `export NAME=...`, `NAME ?= ...` (make), `${NAME:-default}` (a script's own knob)
ASSIGNED = re.compile(r"\b(JOBQUAKE_[A-Z0-9_]+)\s*(?:\??=|:-)")


def test_the_commands_set_only_variables_the_configuration_knows():
    known = {env_name(opt.key) for opt in OPTIONS} | RESERVED_ENV
    assigned = {(path.relative_to(ROOT).as_posix(), name)
                for path in SETTERS for name in ASSIGNED.findall(path.read_text())}
    assert assigned, "no JOBQUAKE_ variable set anywhere: the pattern no longer matches the commands"
    unknown = sorted(f"{where}: {name}" for where, name in assigned if name not in known)
    assert unknown == [], ("set by a command but unknown to the configuration, so a session started "
                           "after it fails: " + ", ".join(unknown) + " (name it outside JOBQUAKE_, or reserve it "
                           "in harness/config/options.py RESERVED_ENV)")
