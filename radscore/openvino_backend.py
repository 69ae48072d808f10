"""``backend="openvino"``: RaTEScore's two model passes (NER and entity encoder) run by OpenVINO.

Each torch model is converted once (``openvino.convert_model``, traced with dynamic batch and
length) and saved as OpenVINO IR with fp32 weights (``compress_to_fp16=False``); later scorers read
the IR instead of converting again. Where the IR is kept:

- next to the export, in ``<export>/openvino/``, when the model comes from a radscore export or
  bundle folder (one holding ``radscore_manifest.json``) that is writable;
- else in ``$RADSCORE_CACHE/openvino/`` (default ``~/.cache/radscore/openvino/``).

A file's name carries a key made of the model's weights (names, shapes, dtypes and the values, or
an evenly spaced sample of 4,096 values for tensors larger than that), the wrapper kind and the
OpenVINO version, so retrained weights or a new OpenVINO never reuse a stale IR.

Precision (the ``precision`` argument of :class:`radscore.RaTEScore`):

- ``"fp32"``: ``INFERENCE_PRECISION_HINT=f32``. The same arithmetic as torch up to the order of
  float32 operations: scores equal the torch backend's to float32 rounding (max |Δ| measured by
  ``benchmarks/scoring/bench_ratescore.py``; an entity type could flip where two labels' logits tie).
- ``"bf16"``: ``INFERENCE_PRECISION_HINT=bf16``, opt-in and approximate, fast on CPUs with native
  bfloat16 (AVX512-BF16, AMX). On a CPU without it OpenVINO runs f32: radscore warns, and
  :meth:`OpenVINOModel.precision` (and the scorer's ``signature()["backend_precision"]``) says
  what ran.

The wrapper answers like the torch model it replaces (``model(input_ids=..., attention_mask=...)``
with ``.logits`` or ``.last_hidden_state``; the span model's positional call returns the tensor)
and passes every other attribute (``config``, ``max_span_width``) to the torch model.
"""

from __future__ import annotations

import hashlib
import os
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Sequence

import numpy as np
import torch

from radscore.export import MANIFEST

PRECISION_HINTS = {"fp32": "f32", "bf16": "bf16"}
SAMPLE_VALUES = 4096  # values per tensor that enter the weights key


def _require_openvino():
    from radscore.optional import require

    return require("openvino")


def cache_root() -> Path:
    return Path(os.environ.get("RADSCORE_CACHE", Path.home() / ".cache" / "radscore")) / "openvino"


def weights_key(model: torch.nn.Module, kind: str, ov_version: str) -> str:
    """16 hex digits naming the weights (see the module doc), the wrapper kind and OpenVINO's version."""
    h = hashlib.sha256(f"{kind}|{ov_version}".encode())
    for name, t in model.state_dict().items():
        flat = t.detach().reshape(-1).cpu()
        if flat.numel() > SAMPLE_VALUES:
            flat = flat[torch.linspace(0, flat.numel() - 1, SAMPLE_VALUES).long()]
        h.update(f"{name}|{tuple(t.shape)}|{t.dtype}".encode())
        h.update(flat.float().numpy().tobytes())
    return h.hexdigest()[:16]


def ir_folder(source: str | None) -> Path:
    """Where the IR of a model loaded from ``source`` is kept (see the module doc)."""
    if source:
        folder = Path(source)
        if (folder / MANIFEST).is_file() and os.access(folder, os.W_OK):
            return folder / "openvino"
    return cache_root()


class _Traced(torch.nn.Module):
    """The torch model with named tensor inputs and one tensor output, for tracing."""

    def __init__(self, model: torch.nn.Module, inputs: Sequence[str], output: str | None):
        super().__init__()
        self.model, self.names, self.output = model, list(inputs), output

    def forward(self, *tensors):
        if self.output is None:  # positional model (the span model)
            return self.model(*tensors)
        out = self.model(**dict(zip(self.names, tensors)))
        return getattr(out, self.output)


def convert(model: torch.nn.Module, example: dict[str, torch.Tensor], output: str | None, path: Path) -> None:
    """Trace ``model`` on ``example`` (every dimension dynamic) and save fp32 IR at ``path`` (.xml)."""
    ov = _require_openvino()
    shapes = [(ov.PartialShape([-1] * t.dim()), ov.Type.i64) for t in example.values()]
    with torch.inference_mode(False), torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracing warnings of the modelling code
        ov_model = ov.convert_model(_Traced(model.eval(), list(example), output),
                                    example_input=tuple(example.values()), input=shapes)
    for port, name in zip(ov_model.inputs, example):
        port.get_tensor().set_names({name})
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.xml")
    ov.save_model(ov_model, tmp, compress_to_fp16=False)
    os.replace(tmp.with_suffix(".bin"), path.with_suffix(".bin"))  # weights first, then the graph
    os.replace(tmp, path)


class OpenVINOModel:
    """An OpenVINO-compiled stand-in for one torch model (see the module doc).

    Args:
        model: the torch model (kept: its attributes are passed through).
        example: named example inputs (int64) for tracing, in call order.
        output: attribute of the torch model's output to return (``"logits"``,
            ``"last_hidden_state"``), or None for a model that returns a tensor.
        source: where the model was loaded from (decides where the IR is kept).
        precision: ``"fp32"`` or ``"bf16"``.
    """

    def __init__(self, model: torch.nn.Module, example: dict[str, torch.Tensor], output: str | None,
                 source: str | None, precision: str = "fp32", kind: str = "model"):
        ov = _require_openvino()
        if precision not in PRECISION_HINTS:
            raise ValueError(f"unknown precision {precision!r}; expected one of {list(PRECISION_HINTS)}")
        self.torch_model, self.output, self.names = model, output, list(example)
        key = weights_key(model, f"{kind}|{output}|{','.join(example)}", ov.__version__)
        self.path = ir_folder(source) / f"{kind}-{key}.xml"
        self.converted = not self.path.is_file()
        if self.converted:
            convert(model, example, output, self.path)
        core = ov.Core()
        if precision == "bf16" and "BF16" not in core.get_property("CPU", "OPTIMIZATION_CAPABILITIES"):
            warnings.warn("backend='openvino', precision='bf16': this CPU has no native bfloat16 "
                          f"({core.get_property('CPU', 'OPTIMIZATION_CAPABILITIES')}); OpenVINO runs f32",
                          RuntimeWarning, stacklevel=3)
        self.compiled = core.compile_model(core.read_model(self.path), "CPU",
                                           {"INFERENCE_PRECISION_HINT": PRECISION_HINTS[precision],
                                            "PERFORMANCE_HINT": "LATENCY"})
        self.request = self.compiled.create_infer_request()

    @property
    def precision(self) -> str:
        """The precision OpenVINO runs the model in (``"fp32"`` or ``"bf16"``)."""
        hint = str(self.compiled.get_property("INFERENCE_PRECISION_HINT")).lower()  # e.g. "<Type: 'bfloat16'>"
        return "bf16" if ("bf16" in hint or "bfloat16" in hint) else "fp32"

    def __getattr__(self, name):  # config, max_span_width, ...: the torch model's
        return getattr(self.__dict__["torch_model"], name)

    def __call__(self, *args, **kwargs):
        tensors = dict(zip(self.names, args))
        tensors.update({k: v for k, v in kwargs.items() if k in self.names})
        missing = [n for n in self.names if n not in tensors]
        if missing:
            raise TypeError(f"OpenVINO model: missing inputs {missing}")
        feed = {n: np.ascontiguousarray(tensors[n].cpu().numpy(), dtype=np.int64) for n in self.names}
        result = torch.from_numpy(np.array(self.request.infer(feed)[0]))
        return result if self.output is None else SimpleNamespace(**{self.output: result})


def _example(n_inputs: int = 2, batch: int = 2, length: int = 12) -> list[torch.Tensor]:
    ids = torch.randint(1000, 2000, (batch, length))
    return [ids, torch.ones(batch, length, dtype=torch.long)][:n_inputs]


def accelerate_ner(recognizer, precision: str = "fp32") -> OpenVINOModel:
    """Run an NER recognizer's model with OpenVINO (in place); returns the wrapper."""
    ids, mask = _example()
    if recognizer.kind == "ner-iob":
        example, output = {"input_ids": ids, "attention_mask": mask}, "logits"
    else:  # span model: spans of width 1-2 over a 12-piece input
        span = torch.tensor([[1, 2, 3, 4], [1, 2, 3, 4]])
        example = {"input_ids": ids, "attention_mask": mask, "span_starts": span, "span_ends": span + 1,
                   "span_widths": torch.full_like(span, 2)}
        output = None
    model = OpenVINOModel(recognizer.model, example, output, recognizer.source, precision, recognizer.kind)
    recognizer.model = model
    return model


def accelerate_encoder(encoder, precision: str = "fp32") -> OpenVINOModel:
    """Run an :class:`~radscore.encoder.EntityEncoder`'s model with OpenVINO (in place)."""
    ids, mask = _example()
    model = OpenVINOModel(encoder.model, {"input_ids": ids, "attention_mask": mask}, "last_hidden_state",
                          encoder.source, precision, "encoder")
    encoder.model = model
    return model
