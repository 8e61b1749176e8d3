"""``python -m refapp run [parts...]`` starts refapp; ``python -m refapp mutants`` lists the mutants."""
from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    """Dispatch to a subcommand."""
    if argv[:1] == ["run"]:
        from refapp import run

        return run.main(argv[1:])
    if argv[:1] == ["mutants"]:
        from refapp import mutants

        return mutants.main()
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
