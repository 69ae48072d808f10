"""Where a scorer runs, and how many items it puts through its model at once there.

Every scorer (:class:`~radscore.ratescore.RaTEScore`, :class:`~radscore.er2score.ER2Score`,
:class:`~radscore.bleurt.ClinicalBLEURT`) resolves its ``device`` with :func:`resolve_device`
before it loads a model, moves every module there and every input tensor of every forward pass:

- ``None``: CUDA when ``torch.cuda.is_available()``, else the CPU;
- ``"cpu"``, ``"cuda"``, ``"cuda:1"`` or a :class:`torch.device`: that device. Asking for CUDA where
  torch sees none (a CPU-only torch build, no driver, no GPU, or an index past the last GPU) is a
  ``ValueError`` that names the scorer and the device; it never falls back to the CPU silently.

``batch_size=None`` takes the scorer's default for the device's type (:data:`DEFAULT_BATCH_SIZES`);
an explicit batch size is used as given.
"""

from __future__ import annotations

import torch

# Items per forward pass when the user passes no batch size, by scorer and device type.
DEFAULT_BATCH_SIZES: dict[str, dict[str, int]] = {
    # RaTEScore: sentences per NER pass (its entity encoder takes 4x as many entity texts). CPU: 64,
    # the default since the first release, so CPU scores are unchanged. CUDA: 256, from the
    # measurement on an H200 with the sample models in fp32: 854 pairs/s at batch 64, 1,411 pairs/s at
    # batch 256 (a GPU needs larger batches to fill; inference memory at 256 sentences of a
    # MiniLM/DeBERTa-base NER model is well under 1 GiB). Not yet re-measured by this repository's
    # benchmark (benchmarks/scoring/bench_ratescore.py --device cuda, which make gpu-check runs).
    "RaTEScore": {"cpu": 64, "cuda": 256},
    # ClinicalBLEURT: pairs per pass. CPU: 32, the default so far. CUDA: 128, NOT measured: chosen for
    # the same reason as RaTEScore's (a 12-layer base-size regressor at 128 pairs x 512 pieces holds
    # about 1 GiB of activations in inference); measure before relying on it.
    "ClinicalBLEURT": {"cpu": 32, "cuda": 128},
    # ER2Score: prompts per pass of a 7-8B decoder (up to 1,024 tokens each); its memory, not the
    # GPU's parallelism, bounds the batch, so the default stays 16 on both until a GPU measures more.
    "ER2Score": {"cpu": 16, "cuda": 16},
}


def resolve_device(device: str | torch.device | None, scorer: str = "radscore") -> torch.device:
    """The device a scorer runs on (module doc); ``scorer`` names it in the error messages."""
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError, ValueError) as err:
        raise ValueError(f"{scorer}: unknown device {device!r} ({err})") from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            build = f"built with CUDA {torch.version.cuda}" if torch.version.cuda else "a CPU-only build"
            raise ValueError(f"{scorer}: device={str(dev)!r} was asked for, but CUDA is not available here "
                             f"(torch {torch.__version__}, {build}); pass device='cpu', or device=None "
                             "to use CUDA only where it is present")
        count = torch.cuda.device_count()
        if dev.index is not None and dev.index >= count:
            raise ValueError(f"{scorer}: device={str(dev)!r} was asked for, but torch sees {count} CUDA "
                             f"device(s) (cuda:0 to cuda:{count - 1})")
    return dev


def default_batch_size(scorer: str, device: torch.device | str) -> int:
    """The scorer's batch size for the device's type when the user gives none (CPU's for any
    device type other than CUDA)."""
    sizes = DEFAULT_BATCH_SIZES[scorer]
    return sizes.get(torch.device(device).type, sizes["cpu"])


def resolve_batch_size(batch_size: int | None, scorer: str, device: torch.device | str) -> int:
    """``batch_size`` as given (at least 1), or the device's default when it is None."""
    if batch_size is None:
        return default_batch_size(scorer, device)
    return max(1, int(batch_size))


def no_grad_for(device: torch.device):
    """The context a scorer's forward passes run in on ``device``: ``torch.inference_mode()``, except
    where autocast is on for the device's type (``precision="bf16"``). Inference mode switches off
    autocast's cache of cast weights, so each forward pass would cast every weight again (a MiniLM
    forward: 112 casts; with the cache 38 after the first, the weights cast once per autocast
    region); ``torch.no_grad()`` keeps the cache. A cached cast is the same cast, so the scores are
    the same (``tests/radscore/test_device.py``)."""
    kind = torch.device(device).type
    if torch.amp.is_autocast_available(kind) and torch.is_autocast_enabled(kind):  # ("meta" has no autocast)
        return torch.no_grad()
    return torch.inference_mode()
