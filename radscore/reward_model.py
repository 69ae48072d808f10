"""The ER²Score reward model (SPEC §3.3): a backbone with LoRA and a multi-reward head.

:class:`MultiRewardModel` is ``AutoModelForSequenceClassification(num_labels=N)`` on any backbone
(encoder or decoder), wrapped by peft LoRA (task type ``SEQ_CLS``). Its classification layer is the
**multi-reward head**: one linear layer from the pooled last hidden state (the last non-pad token
of a decoder, the pooled ``[CLS]`` of a BERT) to the N rewards, one per item of the scoring system,
in "higher is better" units (:mod:`radscore.systems`). The head is listed in peft's
``modules_to_save``, so the adapter folder carries it and a reloaded model never gets a random head.

The input is one prompt per (reference, candidate) made from a template with the placeholders
``{reference}`` and ``{candidate}`` (literal braces are written ``{{`` and ``}}``). A prompt longer
than ``max_length`` tokens loses the end of its reference first, so the candidate (the text being
scored) stays whole wherever it fits with the template; only when the template and the candidate
alone are too long is the candidate cut too (then, if still needed, the prompt at the right). Every
cut is counted and reported (:class:`PromptCuts`). Prompts that fit are tokenized unchanged.

Decoder backbones without a pad token (Llama-3, Phi-2, ...) get a real one (:func:`ensure_pad_token`),
distinct from end-of-sequence, so that the pooled position (the last token that is not padding)
is right whatever the padding side.

Export layout (written by :meth:`MultiRewardModel.save`, read by :meth:`MultiRewardModel.from_export`):
``adapter/`` (peft: LoRA weights and the head), the tokenizer files, ``reward_model.json`` (base
model id, prompt template, max length, pad token, ``finetune``, ``candidate_format``: ``plain`` unless the
model was trained on diff-marked candidates, :func:`radscore.text.mark_differences`) and ``scoring_system.json``. A model
trained in full (``finetune: full``, no LoRA: an option for small backbones, not the paper's recipe)
has ``model/`` (the whole sequence-classification model, head included) instead of ``adapter/``.
"""

from __future__ import annotations

import json
import logging
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import torch
from torch import nn

from radscore.atomic import write_json_atomic
from radscore.optional import require
from radscore.models import resolve_model_path
from radscore.systems import ScoringSystem, load_system
from radscore.text import check_candidate_format, format_inputs

log = logging.getLogger(__name__)

DEFAULT_PROMPT_TEMPLATE = (
    "Compare the candidate radiology report with the reference report and rate its errors.\n"
    "Reference report: {reference}\nCandidate report: {candidate}"
)
ADAPTER_DIR = "adapter"
MODEL_DIR = "model"  # a fully fine-tuned export: the whole sequence-classification model
REWARD_CONFIG = "reward_model.json"
SYSTEM_FILE = "scoring_system.json"
PAD_CANDIDATES = ("<|finetune_right_pad_id|>", "<|reserved_special_token_0|>", "<|pad|>", "<pad>", "[PAD]")
ADDED_PAD = "<|pad|>"
HEAD_NAMES = ("classifier", "score")  # the sequence-classification head of HF models (BERT-like, decoder)


def is_full_export(cfg: dict) -> bool:
    """Whether an export's ``reward_model.json`` (``cfg``) is fully fine-tuned (``model/``, no base
    model needed); exports written before the key existed are LoRA."""
    return cfg.get("finetune", "lora") == "full"


def dry_run_check(folder: str | Path) -> list[str] | None:
    """What can be checked of an export without fetching anything (``python -m train publish
    --dry-run``): None when its base model is on disk or it is fully fine-tuned (a full load
    fetches nothing); else the configs, the scoring system, the adapter and the tokenizer are
    checked (ValueError when one is missing) and the list of what was left unchecked returned."""
    from transformers import AutoTokenizer

    folder = Path(folder)
    cfg = json.loads((folder / REWARD_CONFIG).read_text())
    base = cfg.get("base_model")
    try:
        local = bool(base) and Path(resolve_model_path(base)).is_dir()
    except ImportError:
        local = False
    if is_full_export(cfg) or local:
        return None
    load_system(folder / SYSTEM_FILE)
    adapter = folder / ADAPTER_DIR
    if not (adapter / "adapter_config.json").is_file() or not any(adapter.glob("adapter_model.*")):
        raise ValueError(f"{folder}: {ADAPTER_DIR}/ holds no adapter (adapter_config.json, adapter_model.*)")
    AutoTokenizer.from_pretrained(str(folder))
    return [f"base model {base} not loaded (not on this disk; a dry run fetches nothing): the adapter, "
            "configs, scoring system and tokenizer were checked"]


def check_template(template: str) -> str:
    """The template, or ``ValueError`` unless its only fields are ``{reference}`` and ``{candidate}``."""
    if not isinstance(template, str):
        raise ValueError(f"prompt template must be a string, got {type(template).__name__}")
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    except ValueError as err:
        raise ValueError(f"prompt template is not a valid format string ({err}); write literal braces as {{{{ }}}}") from None
    if sorted(set(fields)) != ["candidate", "reference"]:
        raise ValueError(f"prompt template must contain {{reference}} and {{candidate}} and no other field; "
                         f"found {sorted(set(fields))}")
    return template


def format_prompt(template: str, reference: str, candidate: str) -> str:
    return template.format(reference=reference, candidate=candidate)


@dataclass
class PromptCuts:
    """How many prompts of a call were shortened to ``max_length``, and of those how many lost
    part of the candidate (the reference is cut first)."""
    prompts: int = 0
    candidates: int = 0

    def __bool__(self) -> bool:
        return self.prompts > 0

    def describe(self, total: int, max_length: int) -> str:
        return (f"{self.prompts} of {total} prompts are longer than max_length={max_length} tokens; their "
                f"references were cut at the right ({self.candidates} also lost the end of the candidate)")


def _token_ends(tokenizer, text: str) -> list[int]:
    """Character offset where each token of ``text`` (tokenized alone) ends."""
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    return [end for _, end in enc["offset_mapping"]]


def _shorten(tokenizer, template: str, max_length: int, reference: str, candidate: str,
             ids: list[int]) -> tuple[list[int], bool]:
    """The ids of an over-long prompt after cutting the reference, then the candidate, at token
    boundaries from the right until the prompt fits; whether the candidate was cut."""
    def encode(r: str, c: str) -> list[int]:
        return tokenizer(format_prompt(template, r, c), truncation=False, verbose=False)["input_ids"]

    texts = {"reference": reference, "candidate": candidate}
    for field_ in ("reference", "candidate"):
        ends = _token_ends(tokenizer, texts[field_])
        keep = len(ends)
        while len(ids) > max_length and keep > 0:
            keep = max(0, keep - (len(ids) - max_length))
            texts[field_] = texts[field_][: ends[keep - 1]] if keep else ""
            ids = encode(texts["reference"], texts["candidate"])
        if len(ids) <= max_length:
            return list(ids), field_ == "candidate"
    prompt = format_prompt(template, texts["reference"], texts["candidate"])  # the template alone is too long
    return list(tokenizer(prompt, truncation=True, max_length=max_length)["input_ids"]), True


def encode_prompts(tokenizer, template: str, max_length: int, references: Sequence[str],
                   candidates: Sequence[str], candidate_format: str = "plain") -> tuple[list[list[int]], PromptCuts]:
    """Token ids of each (reference, candidate) prompt, at most ``max_length`` (see the module
    doc for the rule), and what was cut. ``candidate_format`` (:data:`radscore.text.CANDIDATE_FORMATS`):
    ``plain``, the papers' input, ``diff_marked``, the candidate with its differences from the
    reference marked (:func:`radscore.text.mark_differences`) before it goes into the template, or
    ``diff_only``, the marked candidate with the template's reference left empty."""
    references, candidates = format_inputs(candidate_format, references, candidates)
    prompts = [format_prompt(template, r, c) for r, c in zip(references, candidates)]
    ids = [list(x) for x in tokenizer(prompts, truncation=False, verbose=False)["input_ids"]]
    cuts = PromptCuts()
    for k, x in enumerate(ids):
        if len(x) > max_length:
            ids[k], candidate_cut = _shorten(tokenizer, template, max_length, references[k], candidates[k], x)
            cuts.prompts += 1
            cuts.candidates += candidate_cut
    return ids, cuts


def ensure_pad_token(tokenizer) -> str:
    """Give ``tokenizer`` a pad token distinct from end-of-sequence; returns how it was chosen:
    ``"existing"``, ``"reserved:<token>"`` (an unused special token of the vocabulary), ``"unk"`` or
    ``"added"`` (a new ``<|pad|>`` token: the model's embeddings must then grow, see
    :func:`fit_embeddings`)."""
    eos = tokenizer.eos_token_id
    if tokenizer.pad_token_id is not None and tokenizer.pad_token_id != eos:
        return "existing"
    vocab = tokenizer.get_vocab()
    for token in PAD_CANDIDATES:
        if token in vocab and vocab[token] != eos:
            tokenizer.pad_token = token
            return f"reserved:{token}"
    if tokenizer.unk_token_id is not None and tokenizer.unk_token_id != eos:
        tokenizer.pad_token = tokenizer.unk_token
        return "unk"
    tokenizer.add_special_tokens({"pad_token": ADDED_PAD})
    return "added"


def load_tokenizer(source: str):
    """The tokenizer of a backbone or export folder, with a real pad token (:func:`ensure_pad_token`)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(resolve_model_path(source))
    ensure_pad_token(tokenizer)
    return tokenizer


def fit_embeddings(model, tokenizer) -> None:
    """Grow the input embeddings when the tokenizer has more tokens (an added pad token) and tell
    the model its pad id (the pooled position of decoders depends on it). The new row's values
    never reach a reward: padding is masked and never pooled."""
    if len(tokenizer) > model.get_input_embeddings().weight.shape[0]:
        model.resize_token_embeddings(len(tokenizer))
    model.config.pad_token_id = tokenizer.pad_token_id


def disable_dropout(model: nn.Module) -> int:
    """Set every dropout of ``model`` to p = 0; returns how many. A pair's two prompts differ by a
    few words, and independent dropout masks on both sides add reward differences larger than the
    true ones (TRL's reward trainer disables dropout by default for the same reason)."""
    n = 0
    for module in model.modules():
        if isinstance(module, nn.Dropout):
            module.p, n = 0.0, n + 1
    return n


def head_outside_autocast(head: nn.Module) -> None:
    """Run ``head`` outside autocast, in its own weights' dtype: under bf16 mixed precision the N
    rewards would otherwise be rounded to 8 significant bits, and the small reward differences
    between a pair's two candidates (what the MRE loss and pair accuracy look at) would tie."""
    inner = head.forward

    def forward(x, *args, **kwargs):
        # under LoRA the head is peft's wrapper: the frozen original (the backbone's dtype) and the
        # trained copy (float32, trainable_in_float32) that it runs; the trained copy's dtype counts
        params = list(head.parameters())
        dtype = next((p.dtype for p in params if p.requires_grad), params[0].dtype)
        with torch.autocast(device_type=x.device.type, enabled=False):
            return inner(x.to(dtype), *args, **kwargs)

    head.forward = forward


HALF_DTYPES = (torch.bfloat16, torch.float16)


def trainable_in_float32(model: nn.Module) -> int:
    """Keep what LoRA training updates in float32 when the backbone is loaded in 16 bits (``dtype:
    bfloat16``): peft already makes its adapters float32, but the ``modules_to_save`` copies (the
    reward head) keep the backbone's dtype, and AdamW would then update the head in bfloat16, which
    rounds away any change smaller than half a unit in the last place (2^-9 of the weight: at a
    learning rate of 1e-4 no weight above 0.031 moves, and fewer through the warm-up and the end of
    the decay; docs/er2score.md). Frozen weights stay as loaded (``peft.cast_mixed_precision_params``
    would also cast them, to one dtype). Returns the number of parameters cast."""
    cast = 0
    for p in model.parameters():
        if p.requires_grad and p.dtype in HALF_DTYPES:
            p.data, cast = p.data.float(), cast + p.numel()
    return cast


def modules_to_save_in_float32(base: nn.Module, names: Sequence[str]) -> None:
    """Before an adapter is loaded into a 16-bit backbone: make the modules it trained in full (its
    ``modules_to_save``, the head among them) float32, as :func:`trainable_in_float32` trained
    them, so that their saved weights load without rounding (peft copies them into the backbone's
    modules, whatever their dtype). A module matches a name as peft matches it: the name itself or
    a dotted path ending in it."""
    for path, module in base.named_modules():
        if any(path == n or path.endswith("." + n) for n in names):
            if any(p.dtype in HALF_DTYPES for p in module.parameters()):
                module.float()


def head_name(model) -> str:
    for name in HEAD_NAMES:
        if isinstance(getattr(model, name, None), nn.Module):
            return name
    raise ValueError(f"{type(model).__name__}: no sequence-classification head named one of {list(HEAD_NAMES)}")


@dataclass
class LoraSettings:
    """LoRA hyper-parameters. ``target_modules`` None lets peft choose for the architecture;
    ``modules_to_save`` lists modules trained in full besides the head (which is always added);
    ``layers`` restricts LoRA to these transformer layers (None = all; the layers below the
    lowest adapted one then need no backward pass)."""

    r: int = 8
    alpha: int = 16
    dropout: float = 0.05
    target_modules: list[str] | None = None
    modules_to_save: list[str] = field(default_factory=list)
    layers: list[int] | None = None


def _base_model(source: str, system: ScoringSystem, dtype: str | None):
    from transformers import AutoModelForSequenceClassification

    kwargs = {"dtype": getattr(torch, dtype)} if dtype else {}
    return AutoModelForSequenceClassification.from_pretrained(
        resolve_model_path(source), num_labels=system.n, id2label=dict(enumerate(system.items)),
        label2id={k: j for j, k in enumerate(system.items)}, **kwargs)


class MultiRewardModel(nn.Module):
    """The N-head reward model with its tokenizer, scoring system and prompt template."""

    def __init__(self, model: nn.Module, tokenizer, system: ScoringSystem, prompt_template: str,
                 max_length: int, base_model: str, candidate_format: str = "plain"):
        super().__init__()
        self.model, self.tokenizer, self.system = model, tokenizer, system
        self.prompt_template, self.max_length, self.base_model = check_template(prompt_template), int(max_length), base_model
        self.candidate_format = check_candidate_format(candidate_format)
        head_outside_autocast(getattr(self.base, self.head_module))

    # --- construction -------------------------------------------------------------------------
    @classmethod
    def build(cls, backbone: str, system: "str | dict | ScoringSystem", prompt_template: str = DEFAULT_PROMPT_TEMPLATE,
              max_length: int = 512, lora: LoraSettings | None = None, dtype: str | None = None,
              dropout: bool = False, full: bool = False, candidate_format: str = "plain") -> "MultiRewardModel":
        """A fresh model for training: backbone + random N-output head + LoRA (peft, SEQ_CLS), or,
        with ``full=True``, the whole backbone trained (no peft; ``lora`` is then ignored).
        ``dropout=False`` turns the backbone's dropout off (:func:`disable_dropout`);
        ``candidate_format``: how the candidate enters the prompt (:func:`encode_prompts`)."""
        system = load_system(system)
        tokenizer = load_tokenizer(backbone)
        base = _base_model(backbone, system, dtype)
        fit_embeddings(base, tokenizer)
        if not dropout:
            disable_dropout(base)
        if full:
            return cls(base, tokenizer, system, prompt_template, max_length, backbone, candidate_format)
        peft = require("peft")
        LoraConfig, TaskType, get_peft_model = peft.LoraConfig, peft.TaskType, peft.get_peft_model
        lora = lora or LoraSettings()
        save = [head_name(base)] + [m for m in lora.modules_to_save if m != head_name(base)]
        config = LoraConfig(task_type=TaskType.SEQ_CLS, r=lora.r, lora_alpha=lora.alpha, lora_dropout=lora.dropout,
                            target_modules=lora.target_modules, modules_to_save=save,
                            layers_to_transform=lora.layers)
        model = get_peft_model(base, config)
        trainable_in_float32(model)
        return cls(model, tokenizer, system, prompt_template, max_length, backbone, candidate_format)

    @classmethod
    def from_export(cls, folder: str | Path, base_model: str | None = None, dtype: str | None = None) -> "MultiRewardModel":
        """Load an export: the base model (``base_model`` overrides the recorded id, e.g. a local
        copy), the adapter with its head (or, fully fine-tuned, the whole model), the tokenizer, the
        system and the template."""
        from radscore.export import read_manifest

        from radscore.hub import snapshot

        folder = Path(snapshot(str(folder), "ER2Score export"))
        read_manifest(folder, "reward")
        cfg = json.loads((folder / REWARD_CONFIG).read_text())
        system = load_system(folder / SYSTEM_FILE)
        tokenizer = load_tokenizer(str(folder))
        if tokenizer.pad_token != cfg["pad_token"]:
            raise ValueError(f"{folder}: tokenizer pad token {tokenizer.pad_token!r} differs from the "
                             f"trained one {cfg['pad_token']!r}")
        if is_full_export(cfg):  # the whole model is in the export
            if base_model is not None:
                raise ValueError(f"{folder}: a fully fine-tuned export carries its whole model in {MODEL_DIR}/; "
                                 f"base_model={base_model!r} does not apply")
            model = _base_model(str(folder / MODEL_DIR), system, dtype)
        else:
            base = _base_model(base_model or cfg["base_model"], system, dtype)
            fit_embeddings(base, tokenizer)
            peft = require("peft")
            adapter = str(folder / ADAPTER_DIR)
            modules_to_save_in_float32(base, peft.PeftConfig.from_pretrained(adapter).modules_to_save or [])
            model = peft.PeftModel.from_pretrained(base, adapter)
        return cls(model, tokenizer, system, cfg["prompt_template"], cfg["max_length"], cfg["base_model"],
                   cfg.get("candidate_format", "plain")).eval()  # exports from before the key: plain

    def save(self, folder: str | Path) -> None:
        """Adapter (LoRA + head; fully fine-tuned: the whole model in ``model/``), tokenizer,
        ``reward_model.json`` and ``scoring_system.json``; the manifest is written by the caller
        (:func:`radscore.export.write_manifest`)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(str(folder / (MODEL_DIR if self.full else ADAPTER_DIR)))
        self.tokenizer.save_pretrained(str(folder))
        cfg = {"base_model": self.base_model, "prompt_template": self.prompt_template,
               "max_length": self.max_length, "pad_token": self.tokenizer.pad_token,
               "heads": list(self.system.items), "head_module": self.head_module,
               "finetune": "full" if self.full else "lora", "candidate_format": self.candidate_format}
        write_json_atomic(folder / REWARD_CONFIG, cfg, ensure_ascii=True)
        write_json_atomic(folder / SYSTEM_FILE, self.system.to_dict(), ensure_ascii=True)

    @property
    def full(self) -> bool:
        """Whether the whole backbone is trained (no peft adapter)."""
        return not hasattr(self.model, "get_base_model")

    @property
    def base(self) -> nn.Module:
        """The transformers sequence-classification model (under LoRA: peft's base model)."""
        return self.model if self.full else self.model.get_base_model()

    @property
    def head_module(self) -> str:
        return head_name(self.base)

    # --- inputs and forward ---------------------------------------------------------------------
    def encode(self, references: Sequence[str], candidates: Sequence[str]) -> tuple[list[list[int]], PromptCuts]:
        """Token ids of each prompt and what was cut to fit ``max_length`` (module doc)."""
        return encode_prompts(self.tokenizer, self.prompt_template, self.max_length, references, candidates,
                              self.candidate_format)

    def pad(self, sequences: Sequence[Sequence[int]]) -> dict[str, torch.Tensor]:
        """A padded batch (the tokenizer's padding side) of token id lists."""
        return self.tokenizer.pad({"input_ids": [list(s) for s in sequences]}, return_tensors="pt")

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """Rewards (batch, N), internal units, float32."""
        return self.model(input_ids=input_ids, attention_mask=attention_mask).logits.float()
