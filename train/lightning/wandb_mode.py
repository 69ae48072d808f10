"""Weights & Biases: online for a user who has an account configured, offline otherwise.

``WANDB_MODE`` always wins when set. Otherwise a configured account (``WANDB_API_KEY``, or the
``api.wandb.ai`` entry that ``wandb login`` writes to ``~/.netrc`` or ``$NETRC``) means online, and
no account means offline (runs are kept under the run folder; ``wandb sync`` uploads them later).
The decision is printed, never silent.
"""

from __future__ import annotations

import netrc
import os
from pathlib import Path

WANDB_HOST = "api.wandb.ai"


def has_account(environ=os.environ) -> bool:
    """Whether a W&B API key is configured for this user."""
    if environ.get("WANDB_API_KEY"):
        return True
    path = Path(environ.get("NETRC") or Path.home() / ".netrc")
    try:
        hosts = netrc.netrc(str(path)).hosts
    except (OSError, netrc.NetrcParseError):
        return False
    base = environ.get("WANDB_BASE_URL", "").split("://")[-1].rstrip("/")
    return any(h in hosts for h in {WANDB_HOST, base} if h)


def choose_mode(environ=os.environ) -> tuple[str, str]:
    """``(mode, reason)``: ``WANDB_MODE`` when set, else online with an account, else offline."""
    if environ.get("WANDB_MODE"):
        return environ["WANDB_MODE"], "WANDB_MODE is set"
    if has_account(environ):
        return "online", "a W&B account is configured"
    return "offline", "no W&B account is configured (wandb login, or WANDB_API_KEY); `wandb sync` uploads later"


def apply(log=print) -> str:
    """Set ``WANDB_MODE`` for this process as :func:`choose_mode` decides, and say so."""
    mode, reason = choose_mode()
    os.environ["WANDB_MODE"] = mode
    log(f"wandb: {mode} ({reason})")
    return mode
