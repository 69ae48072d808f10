"""Optional dependencies: import one, or fail with the extra that installs it."""

from __future__ import annotations

import importlib

# module -> (pip extra of radscore that installs it, what needs it)
EXTRAS = {"peft": ("er2", "ER2Score (LoRA adapters)"),
          "scipy": ("compare", "radscore compare (approximate randomisation)"),
          "matplotlib": ("compare", "radscore compare (the plot of per-pair differences)"),
          "radeval": ("radeval", "radscore.integrations.radeval"),
          "ray": ("ray", "scoring on Ray (radscore score --ray)"),
          "openvino": ("openvino", "RaTEScore(backend='openvino')")}


def require(module: str):
    """``importlib.import_module(module)``, or an ImportError naming ``pip install 'radscore[extra]'``."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        extra, user = EXTRAS[module.split(".")[0]]
        raise ImportError(f"{user} needs {module}, which is not installed: pip install 'radscore[{extra}]'") from err
