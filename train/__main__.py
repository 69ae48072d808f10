"""``python -m train <command> …``: the training command line. The commands and their help come
from one table, :mod:`train.tasks`; ``python -m train --help`` lists them."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from train.tasks import COMMANDS, help_text

    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(help_text())
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    command = COMMANDS.get(name)
    if command is None:
        print(f"unknown command {name!r}\n{help_text()}", file=sys.stderr)
        return 2
    from train.lightning import quiet

    quiet.install()  # only the known-harmless library messages (train/lightning/quiet.py)
    code = command.main()(rest)
    return 0 if code is None else int(code)


if __name__ == "__main__":
    raise SystemExit(main())
