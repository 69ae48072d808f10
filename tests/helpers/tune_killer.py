"""Run ``tune-weights`` and SIGKILL the process inside trial number K, after its parameters were
drawn and before its value is stored (resume tests).

    python tests/helpers/tune_killer.py K --config … [other tune-weights flags]
"""

import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from train.tune import search  # noqa: E402
from train.tune.cli import main  # noqa: E402


def run_and_kill(at: int, argv: list[str]) -> None:
    evaluate = search.Objective.__call__

    def call(self, trial):
        value = evaluate(self, trial)
        if trial.number >= at:
            os.kill(os.getpid(), signal.SIGKILL)
        return value

    search.Objective.__call__ = call
    main(argv)


if __name__ == "__main__":
    run_and_kill(int(sys.argv[1]), sys.argv[2:])
