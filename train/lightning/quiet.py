"""Silence exactly the library messages that are known to be harmless here, so that the project's
own progress and results stand out. Nothing else is filtered: any other warning, and any of these
messages in a form that could mean a real problem, still shows.

Silenced (:func:`install`):

- transformers' LOAD REPORT when a pretrained backbone gets a new task head: only when every row
  is a MISSING key of the new head (``classifier.*``, ``score.*``) or an UNEXPECTED key of a head
  the task drops (``pooler.*``, ``cls.*``, ``lm_head.*``); a report with any other row (a missing
  encoder weight, a size mismatch, a conversion) is shown whole;
- Lightning's advertisement for LitLogger (an INFO line at every fit);
- LightningCLI's warning that arguments were given both in ``args`` and on the command line:
  ``python -m train fit`` passes its own arguments on purpose (``sys.argv`` is left whole
  because Lightning's DDP launcher re-runs it);
- Lightning's deprecation of ``isinstance(treespec, LeafSpec)``, raised inside Lightning itself by
  the torch release we pin (nothing in this project can change it);
- the model summary's note that it counts bf16-mixed weights as 32-bit.
"""

from __future__ import annotations

import logging
import re
import warnings

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
NEW_HEAD_MISSING = ("classifier.", "score.")
DROPPED_HEAD_UNEXPECTED = ("pooler.", "cls.", "lm_head.")

WARNING_MESSAGES = (
    r"LightningCLI's args parameter is intended to run from within Python",
    r"`isinstance\(treespec, LeafSpec\)` is deprecated",
    r"Precision bf16-mixed is not supported by the model summary",
)


def harmless_load_report(message: str) -> bool:
    """Whether a transformers LOAD REPORT only lists a new head's weights and a dropped head's."""
    text = _ANSI.sub("", message)
    if "LOAD REPORT" not in text:
        return False
    rows = [[c.strip() for c in line.split("|")] for line in text.splitlines()[1:] if "|" in line]
    rows = [r for r in rows if r and r[0] not in ("Key", "") and not set(r[0]) <= set("-+")]
    if not rows:
        return False
    for key, status, *_ in rows:
        if status == "MISSING" and key.startswith(NEW_HEAD_MISSING):
            continue
        if status == "UNEXPECTED" and key.startswith(DROPPED_HEAD_UNEXPECTED):
            continue
        return False
    return True


class _LoadReportFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not harmless_load_report(record.getMessage())


class _LitLoggerTipFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not ("litlogger" in message.lower() and message.lstrip().startswith("💡 Tip"))


_installed = False


def install() -> None:
    """Add the filters above (once per process)."""
    global _installed
    if _installed:
        return
    _installed = True
    for name in ("transformers.modeling_utils", "transformers.utils.loading_report"):
        logging.getLogger(name).addFilter(_LoadReportFilter())
    for name in ("pytorch_lightning.utilities.rank_zero", "lightning.pytorch.utilities.rank_zero",
                 "lightning_fabric.utilities.rank_zero"):
        logging.getLogger(name).addFilter(_LitLoggerTipFilter())
    for message in WARNING_MESSAGES:
        warnings.filterwarnings("ignore", message=message)
