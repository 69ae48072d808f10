"""Device plumbing of the three scorers (radscore.device), checked on the CPU.

- ``device="cpu"``: every parameter and buffer, and every tensor handed to a model's forward, is on
  the CPU, and the signature records the device and batch size.
- The ``meta`` device stands in for an accelerator: a tensor that stayed on the CPU (a model input
  built without ``.to(device)``, a module not moved) shows up as ``cpu`` there. A forward pre-hook
  records the devices of every input and then stops the pass (meta tensors hold no values).
- ``device="cuda"`` where torch sees no CUDA is a ValueError naming the scorer and the device, raised
  before any model is loaded (never a silent CPU run).
- ``batch_size=None`` takes the device's default (pure functions, and the CPU scorers); an explicit
  batch size is kept.
"""

from __future__ import annotations

import pytest
import torch

from radscore import ClinicalBLEURT, ER2Score, RaTEScore
from radscore.systems import RADCLIQ
from train.rehearsal.tiny import (build_tiny_bleurt_export, build_tiny_iob_export, build_tiny_reward_export,
                                  build_tiny_span_export)

CANDS = ["Small left pleural effusion. Heart size is normal.", "No pneumothorax.", "Mild atelectasis."]
REFS = ["No pleural effusion.", "Small right pneumothorax.", "Lungs are clear. Mild atelectasis."]


@pytest.fixture(scope="module")
def exports(tmp_path_factory, tiny_backbone):
    root = tmp_path_factory.mktemp("device_exports")
    return {"iob": build_tiny_iob_export(root / "iob", head_std=0.3, o_bias=-1.0),
            "span": build_tiny_span_export(root / "span"),
            "bleurt": build_tiny_bleurt_export(root / "bleurt", tiny_backbone),
            "reward": _reward(root / "reward", tiny_backbone),
            "encoder": tiny_backbone}


def _reward(folder, backbone):
    build_tiny_reward_export(folder, backbone, RADCLIQ)
    return str(folder)


def _build(kind: str, exports: dict, **options):
    if kind in ("ratescore-iob", "ratescore-span"):
        return RaTEScore(exports[kind.split("-")[1]], encoder=exports["encoder"], **options)
    if kind == "bleurt":
        return ClinicalBLEURT(exports["bleurt"], **options)
    return ER2Score(exports["reward"], progress=False, **options)


def _models(scorer) -> list[torch.nn.Module]:
    if isinstance(scorer, RaTEScore):
        return [scorer.ner.model, scorer.encoder.model]
    return [scorer.model]


class _Stop(Exception):
    """Raised by the recording hook on the meta device: the pass has shown its inputs."""


def _record_inputs(models, seen: list[tuple[int, str]], stop: bool):
    """A forward pre-hook on each model recording (model's position, device) of every tensor argument."""

    def hook_of(k):
        def hook(module, args, kwargs):
            for value in list(args) + list(kwargs.values()):
                if isinstance(value, torch.Tensor):
                    seen.append((k, value.device.type))
            if stop:
                raise _Stop

        return hook

    return [m.register_forward_pre_hook(hook_of(k), with_kwargs=True) for k, m in enumerate(models)]


def _placements(models) -> set[str]:
    return {t.device.type for m in models for t in list(m.parameters()) + list(m.buffers())}


KINDS = ["ratescore-iob", "ratescore-span", "bleurt", "er2"]


@pytest.mark.parametrize("kind", KINDS)
def test_cpu_puts_every_module_and_every_input_on_the_cpu(kind, exports):
    scorer = _build(kind, exports, device="cpu")
    models = _models(scorer)
    assert _placements(models) == {"cpu"}
    seen: list[tuple[int, str]] = []
    _record_inputs(models, seen, stop=False)
    got = scorer.compute_score(CANDS, REFS)
    assert len(got) == len(CANDS)
    assert {k for k, _ in seen} == set(range(len(models)))  # every model ran (RaTEScore: NER and encoder)
    assert {d for _, d in seen} == {"cpu"}
    sig = scorer.signature()
    assert sig["device"] == "cpu" and sig["batch_size"] >= 1


@pytest.mark.parametrize("kind", KINDS)
def test_every_module_and_every_input_follow_the_device(kind, exports):
    """On a device other than the CPU (meta, standing in for CUDA) nothing stays on the CPU: the
    modules' parameters and buffers, the NER model's and the encoder's inputs, the span model's
    start/end/width tensors, the reward model's and BLEURT's inputs."""
    scorer = _build(kind, exports, device="meta")
    models = _models(scorer)
    assert _placements(models) == {"meta"}
    assert scorer.signature()["device"] == "meta"
    passes = [lambda: scorer.compute_score(CANDS, REFS)]
    if isinstance(scorer, RaTEScore):  # the NER pass stops the scoring: run the encoder's on its own
        passes.append(lambda: scorer.encoder(["pleural effusion", "heart"]))
    for k, run in enumerate(passes):
        seen: list[tuple[int, str]] = []
        hooks = _record_inputs(models, seen, stop=True)
        with pytest.raises(_Stop):
            run()
        for h in hooks:
            h.remove()
        assert {m for m, _ in seen} == {k}  # RaTEScore: the NER model, then the encoder
        assert {d for _, d in seen} == {"meta"}, seen


@pytest.mark.parametrize("kind,name", [("ratescore-iob", "RaTEScore"), ("bleurt", "ClinicalBLEURT"),
                                       ("er2", "ER2Score")])
@pytest.mark.parametrize("device", ["cuda", "cuda:1", torch.device("cuda")])
def test_cuda_without_cuda_is_a_clear_error_before_loading(kind, name, device, monkeypatch):
    """No silent CPU fallback; the check comes before any model is read (the export path here does
    not exist, and the error is the device's, not a missing file's)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    missing = {"iob": "no/such/export", "span": "no/such/export", "bleurt": "no/such/export",
               "reward": "no/such/export", "encoder": "no/such/encoder"}
    with pytest.raises(ValueError, match=rf"^{name}: device='{torch.device(device)}' was asked for, but CUDA "
                                         r"is not available here \(torch .*\); pass device='cpu'"):
        _build(kind, missing, device=device)


def test_resolve_device_rules(monkeypatch):
    from radscore.device import resolve_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device(None) == torch.device("cpu")
    assert resolve_device("cpu") == resolve_device(torch.device("cpu")) == torch.device("cpu")
    with pytest.raises(ValueError, match="ER2Score: unknown device 'gpu'"):
        resolve_device("gpu", "ER2Score")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert resolve_device(None) == torch.device("cuda")
    assert resolve_device("cuda:1") == torch.device("cuda:1")
    with pytest.raises(ValueError, match=r"RaTEScore: device='cuda:2' was asked for, but torch sees 2 CUDA"):
        resolve_device("cuda:2", "RaTEScore")


def test_the_default_batch_size_follows_the_device(monkeypatch):
    from radscore.device import DEFAULT_BATCH_SIZES, default_batch_size, resolve_batch_size, resolve_device

    assert default_batch_size("RaTEScore", "cpu") == 64  # the CPU default of every release so far
    assert default_batch_size("RaTEScore", torch.device("cuda:1")) == 256  # the H200 measurement
    assert default_batch_size("ClinicalBLEURT", "cpu") == 32 and default_batch_size("ClinicalBLEURT", "cuda") == 128
    assert default_batch_size("ER2Score", "cpu") == default_batch_size("ER2Score", "cuda") == 16
    assert default_batch_size("RaTEScore", "meta") == 64  # other device types: the CPU's
    assert set(DEFAULT_BATCH_SIZES) == {"RaTEScore", "ClinicalBLEURT", "ER2Score"}
    assert resolve_batch_size(8, "RaTEScore", "cuda") == 8 and resolve_batch_size(0, "RaTEScore", "cpu") == 1
    # device=None on a machine with CUDA: CUDA and its batch size (nothing is moved here)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    dev = resolve_device(None, "RaTEScore")
    assert dev.type == "cuda" and resolve_batch_size(None, "RaTEScore", dev) == 256


@pytest.mark.parametrize("kind,default", [("ratescore-iob", 64), ("bleurt", 32), ("er2", 16)])
def test_scorers_take_the_devices_batch_size_unless_given(kind, default, exports):
    auto, given = _build(kind, exports, device="cpu"), _build(kind, exports, device="cpu", batch_size=3)
    if kind.startswith("ratescore"):
        assert (auto.ner.batch_size, auto.encoder.batch_size) == (default, 4 * default)
        assert (given.ner.batch_size, given.encoder.batch_size) == (3, 12)
    else:
        assert auto.batch_size == default and given.batch_size == 3
    assert auto.signature()["batch_size"] == default and given.signature()["batch_size"] == 3


def test_openvino_backend_defaults_to_the_cpu(exports, monkeypatch):
    """device=None with backend="openvino" means the CPU even where CUDA is present (OpenVINO runs
    on the CPU); the device is resolved before OpenVINO is needed."""
    from radscore import ratescore

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    seen = {}

    def fake_load_ner(source, device, batch_size):
        seen["device"], seen["batch_size"] = device, batch_size
        raise OSError("stop here")

    monkeypatch.setattr(ratescore, "load_ner", fake_load_ner)
    with pytest.raises(Exception):
        RaTEScore(exports["iob"], encoder=exports["encoder"], backend="openvino")
    assert seen == {"device": torch.device("cpu"), "batch_size": 64}


@pytest.mark.parametrize("kind", ["ratescore-iob", "ratescore-span"])
def test_bf16_casts_each_weight_once_per_pass_and_scores_as_before(kind, exports, monkeypatch):
    """precision="bf16": the forward passes run under no_grad, not inference_mode, because inference
    mode turns off autocast's cache of cast weights. One pass over many batches then casts each weight
    once, not once a batch (counted with torch.profiler: the casts of a 1-batch and a 6-batch pass), and
    the scores equal those of the uncached casts exactly."""
    import radscore.device
    import radscore.encoder
    import radscore.ner
    from torch.profiler import ProfilerActivity, profile

    scorer = _build(kind, exports, precision="bf16", device="cpu", batch_size=1)
    sentences = ["Small left pleural effusion.", "No pneumothorax.", "Mild atelectasis at the bases.",
                 "Heart size is normal.", "Lungs are clear.", "Stable right hilar opacity."]

    def casts(texts) -> int:
        with profile(activities=[ProfilerActivity.CPU]) as prof, scorer._autocast():
            scorer.ner(texts)
        return sum(e.count for e in prof.key_averages() if e.key == "aten::_to_copy")

    one, six = casts(sentences[:1]), casts(sentences)
    assert one > 0
    # with the cache each further batch casts its activations only (here fewer than half the first
    # batch's casts); without it every batch casts the weights again, and six batches cost six times one
    assert (six - one) / 5 <= one / 2, (one, six)
    cached = scorer.compute_score(CANDS, REFS)
    uncached_context = lambda device: torch.inference_mode()  # noqa: E731 (the context before the change)
    monkeypatch.setattr(radscore.ner, "no_grad_for", uncached_context)
    monkeypatch.setattr(radscore.encoder, "no_grad_for", uncached_context)
    assert casts(sentences) == 6 * one  # the same count shows the cache is what made the difference
    assert scorer.compute_score(CANDS, REFS) == cached
    assert radscore.device.no_grad_for(torch.device("cpu")).__class__ is torch.inference_mode  # fp32: unchanged


@pytest.mark.parametrize("kind", ["ratescore-iob", "ratescore-span"])
def test_each_batch_is_read_after_the_next_one_is_sent(kind, exports, monkeypatch):
    """The NER model's and the encoder's batches are read one batch late (radscore.ner.Deferred): on a
    GPU the host launches batch k+1 before it waits for batch k's result. On the CPU: the same
    reads, each batch once, and the same scores as a scorer that reads every batch at once."""
    import radscore.encoder
    import radscore.ner

    log: list[str] = []

    class Logged(radscore.ner.Deferred):
        def __init__(self, read):
            def logged(batch, value):
                log.append(f"read {len(batch)}")
                read(batch, value)

            super().__init__(logged)

    class AtOnce(radscore.ner.Deferred):  # the reading before the change: each batch as soon as it is sent
        def push(self, batch, value):
            self.read(batch, value)

    scorer = _build(kind, exports, device="cpu", batch_size=1)  # NER: 1 sentence a batch; encoder: 4 texts
    monkeypatch.setattr(radscore.ner, "Deferred", AtOnce)
    monkeypatch.setattr(radscore.encoder, "Deferred", AtOnce)
    at_once = scorer.compute_score(CANDS, REFS)
    monkeypatch.setattr(radscore.ner, "Deferred", Logged)
    monkeypatch.setattr(radscore.encoder, "Deferred", Logged)
    for k, model in enumerate(_models(scorer)):
        model.register_forward_pre_hook(lambda *a, k=k: log.append(f"forward {k}"))
    assert scorer.compute_score(CANDS, REFS) == at_once
    for k in (0, 1):  # NER, then the encoder
        first, last = log.index(f"forward {k}"), len(log) - 1 - log[::-1].index(f"forward {k}")
        steps = [e.split()[0] for e in log[first:last + 3]]  # this model's forwards and reads, to its last read
        n = steps.count("forward")
        assert n > 1 and steps == ["forward"] + ["forward", "read"] * (n - 1) + ["read"], (k, " ".join(e[0] + e[-1] for e in log))


def test_inputs_go_to_cuda_from_pinned_memory_without_waiting(monkeypatch):
    """A plain ``.to("cuda")`` of pageable memory waits for the device; radscore.ner.to_device pins the
    batch and copies it with ``non_blocking=True`` (checked with stand-ins: no CUDA here). Elsewhere a
    plain ``.to``."""
    from radscore.ner import to_device

    calls = []
    real_to = torch.Tensor.to

    def pin_memory(self):
        calls.append("pin_memory")
        return self

    def to(self, *args, **kwargs):
        calls.append(("to", str(args[0]), kwargs.get("non_blocking", False)))
        return self if str(args[0]).startswith("cuda") else real_to(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "pin_memory", pin_memory)
    monkeypatch.setattr(torch.Tensor, "to", to)
    x = torch.arange(6).reshape(2, 3)
    assert to_device(x, torch.device("cuda")) is x
    assert calls == ["pin_memory", ("to", "cuda", True)]
    calls.clear()
    assert torch.equal(to_device(x, "cpu"), x) and calls == [("to", "cpu", False)]
