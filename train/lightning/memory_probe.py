"""``python -m train memory-probe``: train a config's real architecture (random weights) for a few
steps and put what it measurably keeps beside :mod:`train.lightning.memory`'s estimate, term by term.

The model is built from its transformers config class with the published dimensions (the REAL /
BLEURT tables of :mod:`train.lightning.architectures`; nothing is downloaded), with the config's
fine-tuning mode: IOB NER as ``AutoModelForTokenClassification`` (what ``train.ner`` wraps), span NER
as ``radscore.span_model.SpanNERModel`` (an ``AutoModel`` and the config's span head, over every span
of up to ``max_span_width`` words with each piece a word: the most spans a row can hold), the BLEURT
regressor as :func:`~train.lightning.architectures.bleurt_hf_config`'s ``*ForSequenceClassification``
and the reward model as radscore's ``MultiRewardModel`` over a ``*ForSequenceClassification`` with
peft LoRA (or full), dropout off and gradient checkpointing as configured, made on the probed device
(under ``with device``).
Batches are synthetic token ids that fill every position.

Each step runs in Lightning's automatic-optimisation order (``lightning_step``: forward, ``zero_grad``,
backward, ``optimizer.step``, so the last step's gradients are held through the forward pass) with
the AdamW the training modules make (fused where torch has the kernel). Measured: the allocator's peak
per phase of a step beside the estimate's phases (on CUDA ``torch.cuda.max_memory_allocated`` over
the run and, in one more step, per phase; on the CPU, one more untimed step under the profiler's
memory tracking, ``cpu_phase_peaks``, plus the weights and optimizer state it starts with, naming
the operation at each phase's peak); and everywhere the
bytes of the tensors autograd saves for the backward pass (``torch.autograd.graph.saved_tensors_hooks``: unique storages, model
parameters excluded; with gradient checkpointing, every tensor the checkpointed layers are called with
(hidden states, RoPE's cos and sin, masks), which the non-reentrant checkpoint keeps outside autograd's
saved tensors), and the parameter, gradient and optimizer-state bytes counted from the tensors.
``--layers K`` builds K layers: the per-layer terms scale linearly with the layer count.

Step time: ``--warmup-steps`` untimed steps first (the first of them also counts what autograd
saves), then timed steps until the time is stable (:func:`time_steps`): at least ``--steps`` of
them, and stable when the last ``WINDOW`` (5) step times' spread, (max - min) / median, is at most
``TOLERANCE`` (5%); timing also stops, unstable, at ``--max-steps`` timed steps or once the timed
steps have taken ``--time-budget-s``. The step time reported is the median of the last ``WINDOW``
timed steps; the JSON keeps every step time (``warmup_step_times_s``, ``step_times_s``), ``stable``
and the rule (``stability``). Every step has the same shapes, so more steps do not move the memory
figures: CUDA's peak is the maximum over all of them, and each phase's peak is taken in one more,
separate step.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path
from statistics import median

import torch

from radscore.atomic import write_text_atomic
from radscore.environment import environment
from train.lightning.architectures import BLEURT, REAL, architecture, bleurt_hf_config
from train.lightning.memory import ACTIVATION_TERMS, GIB, estimate_training_memory
from train.lightning.module import adamw_kernel, enable_activation_checkpointing, fused_adamw_supported

WIDTH_KEYS = ("hidden", "heads", "intermediate", "vocab", "kv_heads", "position_buckets", "head_dim")


def config_facts(path: str | Path) -> dict:
    """What the probe needs of a training config (a paper overlay is read after its base): task kind,
    real model facts, fine-tuning mode."""
    from train.lightning.configs import config_chain, init_args, read_configs

    cfg = read_configs(*config_chain(path))
    args = init_args(cfg, "model")
    data = init_args(cfg, "data")
    class_path = str((cfg.get("model") or {}).get("class_path", ""))
    hub_id = args.get("backbone")
    real = REAL.get(hub_id) or BLEURT.get(hub_id)
    if real is None:
        raise SystemExit(f"memory-probe: {path}: backbone {hub_id!r} is not in the REAL/BLEURT tables of "
                         "train.lightning.architectures (its dimensions are unknown)")
    kind = "reward" if "reward" in class_path else "bleurt" if "bleurt" in class_path else "ner"
    return {"cfg": cfg, "kind": kind, "hub_id": hub_id, "real": real, "span": class_path.endswith("SpanTagger"),
            "span_args": {k: args[k] for k in ("max_span_width", "width_dim", "mlp_hidden", "mlp_layers", "dropout")
                          if k in args},
            "precision": (cfg.get("trainer") or {}).get("precision"), "dtype": args.get("dtype"),
            "gradient_clip": bool((cfg.get("trainer") or {}).get("gradient_clip_val")),
            "gradient_checkpointing": bool(args.get("gradient_checkpointing")),
            "lora_r": int(args.get("lora_r") or 0) if args.get("finetune", "lora") != "full" else 0,
            "lora_alpha": args.get("lora_alpha", 16), "lora_dropout": args.get("lora_dropout", 0.05),
            "lora_targets": list(args.get("lora_target_modules") or []),
            "backbone_dropout": bool(args.get("backbone_dropout", False)),
            "batch_size": int(data.get("batch_size") or 1),
            "max_length": int(args.get("max_length") or data.get("max_length") or 512),
            "system": args.get("system", "radcliq"), "prompt_template": args.get("prompt_template")}


def hf_config(facts: dict, layers: int, width: dict):
    """The transformers config of the real model (published dimensions; ``width`` overrides)."""
    import transformers

    real = facts["real"]
    d = {"hidden": real.hidden, "heads": real.heads, "intermediate": real.intermediate or 4 * real.hidden,
         "vocab": real.vocab or 30522, "kv_heads": real.kv_heads or real.heads,
         "position_buckets": real.position_buckets, "head_dim": real.head_dim}
    d.update({k: v for k, v in width.items() if v})
    common = dict(vocab_size=d["vocab"], hidden_size=d["hidden"], num_hidden_layers=layers,
                  num_attention_heads=d["heads"], intermediate_size=d["intermediate"])
    if facts["kind"] == "bleurt":
        return bleurt_hf_config({**common, "max_position_embeddings": 512, "type_vocab_size": 2, "pad_token_id": 0,
                                 "hidden_act": "gelu"}), d
    cls = getattr(transformers, real.config_class)
    if real.config_class == "DebertaV2Config":
        extra = dict(max_position_embeddings=512, relative_attention=True, position_buckets=d["position_buckets"],
                     norm_rel_ebd="layer_norm", share_att_key=True, pos_att_type=["p2c", "c2p"],
                     position_biased_input=False, type_vocab_size=0, max_relative_positions=-1)
    elif real.config_class in ("LlamaConfig", "Qwen2Config", "GemmaConfig"):
        extra = dict(num_key_value_heads=d["kv_heads"], max_position_embeddings=max(real.max_length, 1024),
                     pad_token_id=0, tie_word_embeddings=False)
        if real.config_class == "GemmaConfig":
            extra["head_dim"] = d["head_dim"] or d["hidden"] // d["heads"]
    elif real.config_class == "PhiConfig":
        extra = dict(max_position_embeddings=max(real.max_length, 1024), pad_token_id=0, tie_word_embeddings=False,
                     partial_rotary_factor=real.rotary_fraction, resid_pdrop=0.1)
    elif real.config_class == "MPNetConfig":  # position ids start after the padding index: 2 + length
        extra = dict(max_position_embeddings=max(real.max_length, 512) + 2)
    else:
        extra = dict(max_position_embeddings=max(real.max_length, 512))
    return cls(**common, **extra), d


def build(facts: dict, layers: int, width: dict):
    """(model, loss(ids, mask), rows per example, architecture, params_total, params_trainable)."""
    from transformers import AutoModelForSequenceClassification, AutoModelForTokenClassification

    config, dims = hf_config(facts, layers, width)
    real = facts["real"]
    if facts["kind"] == "ner" and facts["span"]:
        from transformers import AutoModel

        from radscore.span_model import SPAN_CLASSES, SpanClassifierHead, SpanNERModel, enumerate_spans

        head = SpanClassifierHead(config.hidden_size, **facts["span_args"])
        model = SpanNERModel(AutoModel.from_config(config), head)  # as SpanNERModel.from_backbone builds it
        width = head.config["max_span_width"]
        ce = torch.nn.CrossEntropyLoss(ignore_index=-100)

        def loss(ids, mask):  # every piece a word between [CLS] and [SEP]: the most spans a row can hold
            spans = enumerate_spans(ids.shape[1] - 2, width)
            starts = torch.tensor([a + 1 for a, _ in spans], device=ids.device).expand(ids.shape[0], -1)
            ends = torch.tensor([e + 1 for _, e in spans], device=ids.device).expand(ids.shape[0], -1)
            labels = torch.randint(0, len(SPAN_CLASSES), starts.shape, device=ids.device)
            logits = model(ids, mask, starts, ends, ends - starts)
            return ce(logits.reshape(-1, len(SPAN_CLASSES)), labels.reshape(-1))
        rows = 1
    elif facts["kind"] == "ner":
        from radscore.labels import IOB_LABELS

        config.num_labels = real.num_labels or len(IOB_LABELS)
        model = AutoModelForTokenClassification.from_config(config)
        n = config.num_labels

        def loss(ids, mask):
            labels = torch.randint(0, n, ids.shape, device=ids.device)
            return model(input_ids=ids, attention_mask=mask, labels=labels).loss
        rows = 1
    elif facts["kind"] == "bleurt":
        config.num_labels = 1
        model = AutoModelForSequenceClassification.from_config(config)

        def loss(ids, mask):
            return model(input_ids=ids, attention_mask=mask).logits.float().pow(2).mean()
        rows = 1
    else:
        from radscore.reward_model import MultiRewardModel, disable_dropout, head_name, trainable_in_float32
        from radscore.systems import load_system

        system = load_system(facts["system"])
        config.num_labels = system.n
        dtype = getattr(torch, facts["dtype"]) if facts["dtype"] else None
        base = AutoModelForSequenceClassification.from_config(config, **({"dtype": dtype} if dtype else {}))
        if not facts["backbone_dropout"]:
            disable_dropout(base)
        if facts["lora_r"]:
            import peft

            lora = peft.LoraConfig(task_type=peft.TaskType.SEQ_CLS, r=facts["lora_r"], lora_alpha=facts["lora_alpha"],
                                   lora_dropout=facts["lora_dropout"], target_modules=facts["lora_targets"] or None,
                                   modules_to_save=[head_name(base)])
            inner = peft.get_peft_model(base, lora)
            trainable_in_float32(inner)  # as MultiRewardModel.build: the head trains in float32
        else:
            inner = base
        kwargs = {"prompt_template": facts["prompt_template"]} if facts["prompt_template"] else {}
        model = MultiRewardModel(inner, None, system, max_length=facts["max_length"], base_model=facts["hub_id"],
                                 **kwargs)
        if facts["gradient_checkpointing"]:
            enable_activation_checkpointing(model.model)
            model.model.enable_input_require_grads()

        def loss(ids, mask):
            return model(ids, mask).pow(2).mean()
        rows = 2  # a pair: accepted and rejected prompt
    if facts["kind"] != "reward" and facts["gradient_checkpointing"]:
        enable_activation_checkpointing(model)
    model.train()
    arch = architecture(real, facts["cfg"])
    from dataclasses import replace

    # the model's own (copied) config
    built = model.base.config if facts["kind"] == "reward" else model.encoder.config if facts["span"] else model.config
    attn = getattr(built, "_attn_implementation", None) or arch.attention
    arch = replace(arch, hidden=dims["hidden"], layers=layers, heads=dims["heads"], intermediate=dims["intermediate"],
                   vocab=dims["vocab"], kv_heads=dims["kv_heads"], position_buckets=dims["position_buckets"],
                   head_dim=dims["head_dim"], attention="sdpa" if attn == "sdpa" else "eager")
    total = sum(p.numel() for p in model.parameters())
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return model, loss, rows, arch, total, trainable


def _is_weight_copy(t: torch.Tensor, param_ids: set[int]) -> bool:
    """A cast of a parameter (autocast's weight copy), maybe through views: its autograd node is a
    ``ToCopyBackward0`` (after view nodes) whose input is the ``AccumulateGrad`` of one of the model's
    parameters (``param_ids``: their ``id``s). Another leaf that requires grad — the embedding output
    that ``enable_input_require_grads`` marks — is an activation, not a weight."""
    fn = t.grad_fn
    for _ in range(4):
        if fn is None:
            return False
        name = type(fn).__name__
        if name == "ToCopyBackward0":
            nxt = [f for f, _ in fn.next_functions if f is not None]
            return (len(nxt) == 1 and type(nxt[0]).__name__ == "AccumulateGrad"
                    and id(getattr(nxt[0], "variable", None)) in param_ids)
        if name not in ("TBackward0", "ViewBackward0", "TransposeBackward0", "PermuteBackward0", "ExpandBackward0",
                        "UnsqueezeBackward0", "ReshapeAliasBackward0"):
            return False
        fn = fn.next_functions[0][0]
    return False


def lightning_step(model_loss, opt):
    """One training step in Lightning's automatic-optimisation order, as named phases: the
    ``training_step`` (forward), ``optimizer.zero_grad()``, the backward pass, ``optimizer.step()``.
    Lightning zeroes the gradients after the forward pass, so the previous step's gradients are still
    held while the forward pass runs (``pytorch_lightning.loops.optimization.automatic.Closure``)."""
    box = {}

    def forward():
        box["loss"] = model_loss()

    def backward():
        box.pop("loss").backward()

    return [("forward", forward), ("zero_grad", lambda: opt.zero_grad(set_to_none=True)), ("backward", backward),
            ("optimizer_step", opt.step)]


def cpu_phase_peaks(phases) -> dict:
    """Per phase (``(name, fn)`` run in order): the most bytes the CPU allocator held at once, above
    what it held before the first phase, and the operation that allocated at that moment (the
    autograd node in the backward pass). The profiler's memory tracking (``profile_memory=True``)
    reports each allocation and free with the running total of what was allocated since it started;
    a phase's peak is that total's maximum over its allocations. It counts tensor storage only (no
    allocator caching or Python objects), like CUDA's ``max_memory_allocated``."""
    from torch._C._profiler import _EventType
    from torch.profiler import ProfilerActivity, profile, record_function

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        for name, fn in phases:
            with record_function(f"memory-probe:{name}"):
                fn()
    out = {name: {"peak": 0, "at": ""} for name, _ in phases}
    events = []  # (time, bytes (a free is negative), running total after it, phase, where)
    # (node, phase, autograd node being evaluated, enclosing operation)
    stack = [(n, None, "", "") for n in prof.profiler.kineto_results.experimental_event_tree()]
    while stack:
        node, phase, grad_fn, op = stack.pop()
        if node.tag == _EventType.Allocation:
            ef = node.extra_fields
            if phase in out and ef.device.type == "cpu":
                events.append((node.start_time_ns, ef.alloc_size, ef.total_allocated, phase,
                               f"{grad_fn} ({op})" if grad_fn else op))
            continue
        name = node.name
        if name.startswith("memory-probe:"):
            phase = name.split(":", 1)[1]
        elif "evaluate_function: " in name:
            grad_fn = name.split("evaluate_function: ", 1)[1]
        else:
            op = name
        stack.extend((c, phase, grad_fn, op) for c in node.children)
    events.sort(key=lambda e: e[0])
    # the running total is the profiler's reporter's, which outlives a profile (a block allocated under
    # an earlier one and freed outside it stays counted): taken from what it said before the first event
    base = events[0][2] - events[0][1] if events else 0
    started = set()
    for _, size, total, phase, at in events:
        if phase not in started:  # what was held when the phase began
            started.add(phase)
            out[phase] = {"peak": total - size - base, "at": "(held when the phase began)"}
        if size > 0 and total - base > out[phase]["peak"]:
            out[phase] = {"peak": total - base, "at": at}
    return out


def cuda_phase_peaks(phases, dev) -> dict:
    """Per phase: ``torch.cuda.max_memory_allocated`` over the phase (peak statistics reset before it)."""
    out = {}
    for name, fn in phases:
        torch.cuda.synchronize(dev)
        torch.cuda.reset_peak_memory_stats(dev)
        fn()
        torch.cuda.synchronize(dev)
        out[name] = {"peak": torch.cuda.max_memory_allocated(dev), "at": ""}
    return out


def saved_for_backward(model: torch.nn.Module, run):
    """(run()'s result, bytes autograd keeps for the backward pass, bytes of autocast weight copies):
    unique storages saved by the ops of ``run`` (``saved_tensors_hooks``), model parameters excluded,
    plus the inputs of gradient-checkpointed layers (kept by the checkpoint itself)."""
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    param_ids = {id(p) for p in model.parameters()}
    kept: dict[int, int] = {}
    copies: dict[int, int] = {}

    def record(t: torch.Tensor) -> None:
        storage = t.untyped_storage()
        ptr = storage.data_ptr()
        if not ptr or ptr in params:
            return
        if _is_weight_copy(t, param_ids):
            copies[ptr] = storage.nbytes()  # autocast's 16-bit copy of an fp32 weight
        else:
            kept[ptr] = storage.nbytes()

    def pack(t):
        record(t)
        return t

    def pre_hook(module, args, kwargs):  # a checkpointed layer keeps every tensor it is called with
        for value in (*args, *kwargs.values()):
            for t in (value if isinstance(value, (tuple, list)) else (value,)):
                if isinstance(t, torch.Tensor):
                    record(t)

    handles = [m.register_forward_pre_hook(pre_hook, with_kwargs=True) for m in model.modules()
               if getattr(m, "gradient_checkpointing", False) and type(m).__name__.endswith("Layer")]
    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = run()
    finally:
        for h in handles:
            h.remove()
    return out, sum(kept.values()), sum(copies.values())


WINDOW = 5  # step times the stability rule looks at
TOLERANCE = 0.05  # their largest (max - min) / median that counts as stable


def spread(times: list[float]) -> float:
    """(max - min) / median of step times."""
    return (max(times) - min(times)) / median(times)


def check_steps(min_steps: int, max_steps: int, warmup_steps: int = 1) -> None:
    """The step counts must make sense: a clear error naming the flag, before anything is built."""
    if warmup_steps < 1:
        raise SystemExit(f"memory-probe: --warmup-steps must be >= 1 (the first step counts what autograd saves "
                         f"and is never timed), got {warmup_steps}")
    if not 1 <= min_steps <= max_steps:
        raise SystemExit(f"memory-probe: need 1 <= --steps ({min_steps}) <= --max-steps ({max_steps})")


def time_steps(step, min_steps: int = WINDOW, max_steps: int = 30, time_budget_s: float | None = 300.0,
               window: int = WINDOW, tolerance: float = TOLERANCE, clock=time.perf_counter) -> dict:
    """Run ``step()`` and time it until the time is stable: returns ``{"times", "stable", "stopped"}``.
    After at least ``min_steps`` steps, stop as soon as the last ``window`` times have a spread
    ((max - min) / median) of at most ``tolerance`` (``stopped: "stable"``); else stop at ``max_steps``
    steps or once the timed steps together took ``time_budget_s`` (``None``: no budget), unstable."""
    check_steps(min_steps, max_steps)
    if window < 2 or tolerance <= 0:
        raise ValueError(f"memory-probe: the stability window ({window}) must be >= 2 and the tolerance "
                         f"({tolerance}) > 0")
    times: list[float] = []
    while True:
        t0 = clock()
        step()
        times.append(clock() - t0)
        if len(times) < min_steps:
            continue
        if len(times) >= window and spread(times[-window:]) <= tolerance:
            return {"times": times, "stable": True, "stopped": "stable"}
        if len(times) >= max_steps:
            return {"times": times, "stable": False, "stopped": "max_steps"}
        if time_budget_s is not None and sum(times) >= time_budget_s:
            return {"times": times, "stable": False, "stopped": "time_budget"}


def device_name(dev: torch.device) -> str:
    """The GPU's name (``torch.cuda.get_device_name``), or the CPU's model and core count."""
    if dev.type == "cuda":
        return torch.cuda.get_device_name(dev)
    import os

    from radscore.environment import cpu_name

    return f"{cpu_name()} ({os.cpu_count()} cores)"


def probe(config: str, steps: int = WINDOW, batch_size: int | None = None, max_length: int | None = None,
          layers: int | None = None, device: str | None = None, width: dict | None = None, warmup_steps: int = 3,
          max_steps: int = 30, time_budget_s: float | None = 300.0, precision: str | None = None) -> dict:
    """Probe ``config``: ``warmup_steps`` untimed steps, then at least ``steps`` timed ones until the
    step time is stable (:func:`time_steps`), then the per-phase step. ``precision`` replaces the
    trainer's (``32-true``, ``bf16-mixed``, ...); by default the config's."""
    check_steps(steps, max_steps, warmup_steps)
    facts = config_facts(config)
    if precision is not None:
        facts["precision"] = precision
    real = facts["real"]
    layers = layers or real.layers
    b = batch_size or facts["batch_size"]
    s = max_length or facts["max_length"]
    dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    torch.manual_seed(0)
    with dev:  # weights made and initialised on the device: an 8B model's two normal_ passes take minutes on a CPU
        model, loss_fn, rows, arch, total, trainable = build(facts, layers, width or {})
    model.to(dev)
    params = [p for p in model.parameters() if p.requires_grad]
    precision = str(facts["precision"] or "32-true")
    mixed = precision.endswith("-mixed")
    kernel = adamw_kernel(dev.type, facts["gradient_clip"], precision)  # the training modules' AdamW
    opt = torch.optim.AdamW(params, lr=1e-5, fused=(kernel == "fused" and fused_adamw_supported(params)) or None)
    amp = torch.bfloat16 if precision.startswith("bf16") else torch.float16
    n = b * rows
    ids = torch.randint(1, arch.vocab, (n, s), device=dev)
    mask = torch.ones_like(ids)
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats(dev)
    warmup_times, kept = [], {"saved": 0, "copies": 0}

    def model_loss():
        with torch.autocast(dev.type, dtype=amp, enabled=mixed):
            return loss_fn(ids, mask)

    def first_loss():  # the first step's forward pass also counts what autograd saves
        loss, kept["saved"], kept["copies"] = saved_for_backward(model, model_loss)
        return loss

    def one_step(loss=model_loss):
        for _, fn in lightning_step(loss, opt):
            fn()
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)

    for step in range(warmup_steps):  # untimed (their times kept): the first counts what autograd saves
        t0 = time.perf_counter()
        one_step(first_loss if step == 0 else model_loss)
        warmup_times.append(time.perf_counter() - t0)
    timing = time_steps(one_step, steps, max_steps, time_budget_s)
    times = timing["times"]
    steps_run = warmup_steps + len(times)
    saved, copies = kept["saved"], kept["copies"]
    nbytes = lambda ts: sum(t.numel() * t.element_size() for t in ts)
    measured = {"weights": nbytes(model.parameters()),
                "gradients": nbytes(p.grad for p in model.parameters() if p.grad is not None),
                "optimizer": nbytes(v for st in opt.state.values() for v in st.values()
                                    if isinstance(v, torch.Tensor) and v.dim() > 0),
                "autocast_weight_copies": copies, "activations_saved": saved}
    phases = {}
    if dev.type == "cuda":
        measured["peak_allocated"] = torch.cuda.max_memory_allocated(dev)  # over every step
        measured["peak_reserved"] = torch.cuda.max_memory_reserved(dev)  # the caching allocator's, over every step
        # one more step (at least one has run: the optimizer state exists), its peak per phase
        phases = cuda_phase_peaks(lightning_step(model_loss, opt), dev)
        phases.pop("zero_grad")
    else:  # one more, untimed step under the profiler's allocation tracking
        # the last step's gradients are made again inside the profile (same shapes, zeros): the profiler
        # sees no free of a block allocated before it started, and zero_grad frees them
        opt.zero_grad(set_to_none=True)

        def hold_gradients():
            for p in params:
                p.grad = torch.zeros_like(p)
        phases = cpu_phase_peaks([("gradients", hold_gradients), *lightning_step(model_loss, opt)])
        phases.pop("gradients")
        phases.pop("zero_grad")
        state = measured["weights"] + measured["optimizer"]  # allocated when the profile starts
        for v in phases.values():
            v["peak"] += state
        measured["peak_allocated"] = max(v["peak"] for v in phases.values())
    est = estimate_training_memory(total, trainable, arch, n, s, facts["precision"], facts["dtype"],
                                   facts["gradient_checkpointing"], device=dev.type,
                                   lora_targets=facts["lora_targets"] if facts["lora_r"] else (),
                                   lora_rank=facts["lora_r"],
                                   optimizer=kernel)
    eb = est["bytes"]
    # what a forward pass leaves saved: every activation term but the backward-time recomputation
    act_est = eb["activations"] - eb["checkpoint_recompute"]
    ratio = {"weights": measured["weights"] / eb["weights"], "gradients": measured["gradients"] / max(eb["gradients"], 1),
             "optimizer": measured["optimizer"] / max(eb["optimizer"], 1),
             "activations_saved": saved / max(act_est, 1)}
    if eb["autocast_weight_copies"]:
        ratio["autocast_weight_copies"] = copies / eb["autocast_weight_copies"]
    est_total = est["phases"][est["peak_phase"]]  # the estimate's peak in bytes (unrounded)
    if "peak_allocated" in measured:
        ratio["peak_allocated"] = measured["peak_allocated"] / est_total
    for k, v in phases.items():
        v["estimate"] = est["phases"][k]
        v["ratio"] = v["peak"] / v["estimate"]
    step_s = median(times[-WINDOW:])  # the step time: the median of the last WINDOW timed steps
    return {"config": str(config), "model": facts["hub_id"], "device": dev.type,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "device_name": device_name(dev), "torch": torch.__version__,
            "batch_size": b, "rows": n, "max_length": s, "layers": layers,
            "real_layers": real.layers, "precision": precision, "dtype": facts["dtype"],
            "gradient_checkpointing": facts["gradient_checkpointing"], "lora_r": facts["lora_r"],
            "width": {k: getattr(arch, k) for k in ("hidden", "heads", "intermediate", "vocab")},
            "params_total": total, "params_trainable": trainable,
            "estimate": eb, "estimate_gib": est["gib"], "estimate_peak_bytes": est_total, "estimate_peak_phase": est["peak_phase"],
            "assumptions": est["assumptions"],
            "activations_saved_estimate": act_est, "measured": measured, "ratio": ratio, "phases": phases,
            "step_s": step_s, "tokens_per_s": n * s / step_s, "steps": steps_run,
            "warmup_steps": warmup_steps, "timed_steps": len(times), "warmup_step_times_s": warmup_times,
            "step_times_s": times, "stable": timing["stable"],
            "stability": {"rule": f"(max - min) / median of the last {WINDOW} timed step times <= {TOLERANCE}",
                          "window": WINDOW, "tolerance": TOLERANCE, "min_steps": steps, "max_steps": max_steps,
                          "time_budget_s": time_budget_s, "stopped": timing["stopped"],
                          "spread": spread(times[-WINDOW:]) if len(times) >= 2 else None},
            "note": (f"built with {layers} of {real.layers} layers: the per-layer activation terms scale "
                     "linearly with the layer count" if layers != real.layers else "all layers built")}


def render(r: dict) -> str:
    mb = lambda v: f"{v / 2**20:12.1f}"
    lines = [f"memory-probe {r['config']} ({r['model']}) on {r['device']}: batch {r['batch_size']} "
             f"({r['rows']} rows) x {r['max_length']}, {r['layers']} layers, {r['precision']}"
             f"{', dtype ' + r['dtype'] if r['dtype'] else ''}{', gradient checkpointing' if r['gradient_checkpointing'] else ''}",
             r["note"], f"{'term':<28}{'estimate MiB':>12}{'measured MiB':>14}{'ratio':>8}"]
    m, e = r["measured"], r["estimate"]
    for k in ("weights", "autocast_weight_copies", "master_weights", "gradients", "optimizer"):
        got = m.get(k)
        lines.append(f"{k:<28}{mb(e[k])}{mb(got) if got is not None else '':>14}"
                     f"{r['ratio'].get(k, float('nan')):8.3f}" if got is not None else f"{k:<28}{mb(e[k])}")
    for k in ACTIVATION_TERMS:
        lines.append(f"  {k:<26}{mb(e[k])}")
    lines.append(f"{'activations saved':<28}{mb(r['activations_saved_estimate'])}{mb(m['activations_saved']):>14}"
                 f"{r['ratio']['activations_saved']:8.3f}")
    if r["gradient_checkpointing"]:
        lines.append("  (saved count: layer inputs and head; checkpoint_recompute happens in the backward pass, not in it)")
    for k in ("forward_transient", "backward_transient", "span_head_backward", "optimizer_transient"):
        lines.append(f"{k:<28}{mb(e[k])}")
    for k, v in r.get("phases", {}).items():  # each phase's worst moment, measured where the allocator was watched
        lines.append(f"{'phase ' + k:<28}{mb(v['estimate'])}{mb(v['peak']):>14}{v['ratio']:8.3f}"
                     + (f"  at {v['at']}" if v.get("at") else ""))
    if "peak_allocated" in m:
        lines.append(f"{'peak allocated':<28}{mb(r['estimate_peak_bytes'])}{mb(m['peak_allocated']):>14}"
                     f"{r['ratio']['peak_allocated']:8.3f}  (estimated in the {r['estimate_peak_phase']} phase)")
    stab = r["stability"]
    lines.append(f"step {r['step_s']:.3f} s, {r['tokens_per_s']:.0f} tokens/s (median of the last "
                 f"{min(stab['window'], r['timed_steps'])} of {r['timed_steps']} timed steps after {r['warmup_steps']} "
                 f"warm-up; {'stable' if r['stable'] else 'NOT stable, stopped at ' + stab['stopped']}: {stab['rule']})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m train memory-probe", description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", required=True)
    ap.add_argument("--steps", type=int, default=WINDOW,
                    help=f"time at least this many steps after the warm-up (default {WINDOW})")
    ap.add_argument("--warmup-steps", type=int, default=3, help="untimed steps first (default 3; at least 1)")
    ap.add_argument("--max-steps", type=int, default=30,
                    help="stop timing here even if the step time is not stable (default 30)")
    ap.add_argument("--time-budget-s", type=float, default=300.0,
                    help="stop timing once the timed steps took this long, stable or not (default 300; 0: no budget)")
    ap.add_argument("--batch-size", type=int, default=None, help="examples (reward: pairs) per step")
    ap.add_argument("--max-length", type=int, default=None)
    ap.add_argument("--layers", type=int, default=None, help="build K layers (per-layer terms scale linearly)")
    ap.add_argument("--device", default=None, help="cuda | cpu (default: cuda where there is one)")
    ap.add_argument("--precision", default=None,
                    help="the trainer precision to probe under, e.g. 32-true or bf16-mixed (default: the config's)")
    for k in WIDTH_KEYS:
        ap.add_argument(f"--{k.replace('_', '-')}", type=int, default=None,
                        help=f"override the real model's {k} (quick checks and tests only)")
    ap.add_argument("--out", default=None, help="write the JSON here")
    a = ap.parse_args(argv)
    width = {k: getattr(a, k) for k in WIDTH_KEYS if getattr(a, k)}
    r = probe(a.config, a.steps, a.batch_size, a.max_length, a.layers, a.device, width, warmup_steps=a.warmup_steps,
              max_steps=a.max_steps, time_budget_s=a.time_budget_s or None, precision=a.precision)
    r["width_overrides"] = width
    print(render(r))
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        r["environment"] = environment(precision=r.get("precision"), seed=0)  # the probe's torch.manual_seed
        write_text_atomic(Path(a.out), json.dumps(r, indent=2) + "\n")
        print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
