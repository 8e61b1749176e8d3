"""``jobquake init [--dry-run] [PATH]``: scan, render, write (or print), and say what is left to do."""
from __future__ import annotations

from pathlib import Path

from harness.scaffold.render import render
from harness.scaffold.scan import scan
from harness.scaffold.write import InitError, conflicts, write


def run_init(path: Path, *, dry_run: bool, out=print) -> int:
    """The ``init`` subcommand; 0 on success, InitError when it would overwrite."""
    root = Path(path).resolve()
    if not root.is_dir():
        raise InitError(f"{root}: not a folder")
    found = scan(root)
    scaffold = render(found)
    if dry_run:
        out(f"# would append to {root / 'pyproject.toml'}:\n")
        out(scaffold.config + scaffold.pytest_section)
        for rel, text in scaffold.files.items():
            out(f"# would create {root / rel}:\n")
            out(text)
        for clash in conflicts(root, scaffold, found.has_jobquake_section):
            out(f"# would refuse: {clash}")
    else:
        for written in write(root, scaffold, has_section=found.has_jobquake_section):
            out(f"wrote {written}")
    _summary(found, scaffold, out)
    return 0


def _summary(found, scaffold, out) -> None:
    app = f"{found.celery_app[0]}.{found.celery_app[1]}" if found.celery_app else "none"
    out(f"\nfound: Celery app {app}; {len(found.tasks)} task(s); {len(found.tables)} table(s); "
        f"{len(found.env_vars)} environment variable(s); {len(found.processes) + len(found.commands)} process(es)"
        + (f" ({found.framework} project)" if found.framework else ""))
    if scaffold.todos:
        out(f"\n{len(scaffold.todos)} thing(s) could not be inferred; each is a commented "
            "TODO(jobquake init) where it goes:")
        for todo in scaffold.todos:
            out(f"  TODO {todo}")
    out("\nnext: `jobquake config` shows the settings; `pytest scenarios` runs the scenarios")
