"""Stand-ins for the papers' Hub models and datasets, for rehearsing the paper configs offline.

A stand-in has the real model's transformers config class and model class, tiny dimensions and
random weights, and a tokenizer of the same kind (WordPiece, SentencePiece unigram, SentencePiece
BPE with byte fallback, byte-level BPE; with or without a pad token, as the real one), trained on
the sample corpus's text. Datasets are folders in the published layout. Everything is built
locally and deterministically (seeded), and cached under the folder given to :func:`substitution`.

The one substitution point is the environment variable ``RADSCORE_STANDINS``: when it names a
folder, :func:`radscore.models.resolve_model_path` and :func:`data.ratener.resolve_root` resolve a
Hub id ``owner/name`` to ``<folder>/owner--name`` (a missing stand-in is an error, never a
download). Nothing else in the code under rehearsal changes.

What the papers' models are (class, size, attention shape: the ``REAL``, ``BLEURT`` and
``CUSTOM_CODE`` tables) is :mod:`train.lightning.architectures`'; the stand-ins are built from those
rows, and :func:`describe_config` reads them for the rehearsal report and the GPU memory estimate
(:mod:`train.lightning.memory`). Models without a stand-in yet are listed in ``MISSING`` with the reason.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path

from train.lightning.architectures import BLEURT, CUSTOM_CODE, REAL, Real, architecture

ENV = "RADSCORE_STANDINS"
REPO = Path(__file__).resolve().parents[2]
VERSION = 9  # bump when a builder changes: cached stand-ins are rebuilt

DATASETS = {"Angelakeke/RaTE-NER", "Angelakeke/RaTE-EVAL"}
MISSING: dict[str, str] = {}
# CXR-BERT and BioViL-T (CUSTOM_CODE) ship their own modelling code: their stand-ins ship this tiny
# code of ours behind the same auto_map
CONFIG_CODE = """from transformers import BertConfig


class CXRBertConfig(BertConfig):
    \"\"\"Stand-in configuration (radscore rehearsal): BERT with a projection size.\"\"\"

    model_type = "cxr-bert"

    def __init__(self, projection_size=128, **kwargs):
        super().__init__(**kwargs)
        self.projection_size = projection_size
"""
MODEL_CODE = """import torch
from transformers import BertModel, BertPreTrainedModel

from .configuration_cxrbert import CXRBertConfig


class CXRBertModel(BertPreTrainedModel):
    \"\"\"Stand-in model (radscore rehearsal): a BERT encoder and a [CLS] projection head.\"\"\"

    config_class = CXRBertConfig

    def __init__(self, config):
        super().__init__(config)
        self.bert = BertModel(config, add_pooling_layer=False)
        self.cls_projection_head = torch.nn.Linear(config.hidden_size, config.projection_size)
        self.post_init()

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, **kwargs):
        return self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
"""


def folder_name(hub_id: str) -> str:
    return hub_id.replace("/", "--")


def hub_ids() -> set[str]:
    """Every Hub model and dataset id this module knows (with or without a stand-in)."""
    return set(REAL) | set(BLEURT) | set(CUSTOM_CODE) | DATASETS | set(MISSING)


# --- tokenizers ----------------------------------------------------------------------------------
def _corpus() -> list[str]:
    from data.annotation import read_reports

    return [s.text for r in read_reports(REPO / "data" / "samples" / "reports.jsonl") for s in r.sentences]


def _save_fast(tok, folder: Path, **special) -> None:
    from transformers import PreTrainedTokenizerFast

    PreTrainedTokenizerFast(tokenizer_object=tok, **special).save_pretrained(folder)


def build_tokenizer(kind: str, folder: Path) -> None:
    """A tokenizer of ``kind`` saved in ``folder`` (trained on the sample corpus; deterministic)."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    from radscore.models import PACKAGED_MINILM, resolve_model_path

    if kind == "wordpiece":  # BERT uncased WordPiece: the packaged MiniLM's own tokenizer
        from transformers import AutoTokenizer

        AutoTokenizer.from_pretrained(resolve_model_path(PACKAGED_MINILM)).save_pretrained(folder)
        return
    if kind == "mpnet-wordpiece":  # MPNet: the same WordPiece with <s> </s> <pad> <unk> <mask>
        data = json.loads((Path(resolve_model_path(PACKAGED_MINILM)) / "tokenizer.json").read_text())
        rename = {"[CLS]": "<s>", "[SEP]": "</s>", "[PAD]": "<pad>", "[UNK]": "<unk>", "[MASK]": "<mask>"}
        vocab = {rename.get(k, k): v for k, v in data["model"]["vocab"].items()}
        tok = Tokenizer(models.WordPiece(vocab, unk_token="<unk>", max_input_chars_per_word=100))
        tok.normalizer = normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece()
        tok.post_processor = processors.TemplateProcessing(
            single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
            special_tokens=[("<s>", vocab["<s>"]), ("</s>", vocab["</s>"])])
        _save_fast(tok, folder, bos_token="<s>", eos_token="</s>", cls_token="<s>", sep_token="</s>",
                   pad_token="<pad>", unk_token="<unk>", mask_token="<mask>")
        return
    texts = _corpus()
    if kind == "sp-unigram":  # DeBERTa-v3 / RemBERT: SentencePiece unigram with Metaspace
        specials = ["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"]
        tok = Tokenizer(models.Unigram())
        tok.normalizer = normalizers.NFKC()
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        tok.decoder = decoders.Metaspace()
        tok.train_from_iterator(texts, trainers.UnigramTrainer(vocab_size=1200, special_tokens=specials,
                                                               unk_token="[UNK]", shrinking_factor=0.75))
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
            special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))])
        _save_fast(tok, folder, pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]", unk_token="[UNK]",
                   mask_token="[MASK]")
        return
    if kind in ("sp-bpe", "sp-bpe-gemma"):  # Llama-2 / Vicuna / Meditron / Gemma: SentencePiece BPE, byte fallback
        gemma = kind == "sp-bpe-gemma"
        specials = ["<pad>", "<eos>", "<bos>", "<unk>"] if gemma else ["<unk>", "<s>", "</s>"]
        bos, eos = ("<bos>", "<eos>") if gemma else ("<s>", "</s>")
        bytes_ = [f"<0x{b:02X}>" for b in range(256)]
        tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
        tok.normalizer = normalizers.Replace(" ", "▁")
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=True)
        tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                         decoders.Strip(" ", 1, 0)])
        # trained word by word (SentencePiece's split_by_whitespace: pieces start with "▁"), then run on
        # the whole text as the Llama-2 fast tokenizers do
        tok.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=1200, special_tokens=specials + bytes_))
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=False)
        tok.post_processor = processors.TemplateProcessing(
            single=f"{bos} $A", pair=f"{bos} $A {bos} $B", special_tokens=[(bos, tok.token_to_id(bos))])
        extra = {"pad_token": "<pad>"} if gemma else {}  # Llama-2-style tokenizers have none
        _save_fast(tok, folder, bos_token=bos, eos_token=eos, unk_token="<unk>", **extra)
        return
    if kind == "byte-bpe-roberta":  # RoBERTa: byte-level BPE with <s> </s> <pad> <unk> <mask>
        specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        tok.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=1200, special_tokens=specials,
                                                           initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
        tok.post_processor = processors.RobertaProcessing(("</s>", tok.token_to_id("</s>")),
                                                          ("<s>", tok.token_to_id("<s>")), add_prefix_space=False)
        _save_fast(tok, folder, bos_token="<s>", eos_token="</s>", sep_token="</s>", cls_token="<s>",
                   pad_token="<pad>", unk_token="<unk>", mask_token="<mask>")
        return
    if kind.startswith("byte-bpe"):  # Llama-3 / Qwen / GPT-2 (Phi-2): byte-level BPE
        names = {"byte-bpe-llama3": ("<|begin_of_text|>", "<|end_of_text|>"),
                 "byte-bpe-qwen": (None, "<|endoftext|>"), "byte-bpe-gpt2": ("<|endoftext|>", "<|endoftext|>")}[kind]
        bos, eos = names
        specials = [t for t in dict.fromkeys([bos, eos]) if t]
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        tok.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=1200, special_tokens=specials,
                                                           initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
        if kind == "byte-bpe-llama3":
            tok.post_processor = processors.TemplateProcessing(
                single=f"{bos} $A", pair=f"{bos} $A {bos} $B", special_tokens=[(bos, tok.token_to_id(bos))])
        else:
            tok.post_processor = processors.ByteLevel(trim_offsets=False)
        extra = {"pad_token": eos} if kind == "byte-bpe-qwen" else {}  # Qwen1.5 pads with <|endoftext|>
        _save_fast(tok, folder, eos_token=eos, **({"bos_token": bos} if bos else {}), **extra)
        return
    raise ValueError(f"unknown tokenizer kind {kind!r}")


# --- models --------------------------------------------------------------------------------------
def build_model(hub_id: str, folder: Path, seed: int = 0) -> None:
    """The stand-in of ``hub_id``: its tokenizer and a tiny random model of the real classes."""
    import torch
    import transformers
    from transformers import AutoTokenizer

    real = REAL[hub_id]
    build_tokenizer(real.tokenizer, folder)
    config_file = folder / "tokenizer_config.json"
    tok_config = json.loads(config_file.read_text())
    tok_config["tokenizer_class"] = real.tokenizer_class  # AutoTokenizer loads the real class
    tok_config["model_max_length"] = real.max_length
    config_file.write_text(json.dumps(tok_config, indent=2))
    tok = AutoTokenizer.from_pretrained(folder)
    dims = dict(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                intermediate_size=64)
    if real.config_class in ("LlamaConfig", "Qwen2Config"):
        dims.update(num_key_value_heads=1 if real.kv_heads else 2, max_position_embeddings=1024,
                    tie_word_embeddings=False)
    elif real.config_class == "GemmaConfig":
        dims.update(num_key_value_heads=2, head_dim=16, max_position_embeddings=1024)
    elif real.config_class == "PhiConfig":
        dims.update(max_position_embeddings=1024, partial_rotary_factor=0.5)
    elif real.config_class == "DebertaV2Config":
        dims.update(max_position_embeddings=512, relative_attention=True, position_buckets=256,
                    norm_rel_ebd="layer_norm", share_att_key=True, pos_att_type=["p2c", "c2p"],
                    position_biased_input=False, type_vocab_size=0)
    else:
        dims.update(max_position_embeddings=514 if real.config_class in ("MPNetConfig", "RobertaConfig") else 512)
    for name in ("pad_token_id", "bos_token_id", "eos_token_id"):
        token_id = getattr(tok, name)
        if token_id is not None:
            dims[name] = token_id
    if real.num_labels:
        dims.update(num_labels=real.num_labels)
    config = getattr(transformers, real.config_class)(**dims)
    torch.manual_seed(seed)
    model = getattr(transformers, real.model_class)(config)
    model.save_pretrained(folder)
    (folder / "STANDIN.md").write_text(
        f"# Stand-in for {hub_id}\n\nRandom weights, tiny dimensions, the real config class "
        f"({real.config_class}) and model class ({real.model_class}), a {real.tokenizer} tokenizer "
        "trained on the radscore sample corpus. Built by train.rehearsal.standins for `python -m train rehearse`; "
        "not a model of anything.\n")


def build_custom_code(hub_id: str, folder: Path, seed: int = 0) -> None:
    """A repository that ships its own modelling code (``auto_map``), as CXR-BERT does."""
    import torch
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    build_tokenizer("wordpiece", folder)
    (folder / "configuration_cxrbert.py").write_text(CONFIG_CODE)
    (folder / "modeling_cxrbert.py").write_text(MODEL_CODE)
    tok = AutoTokenizer.from_pretrained(folder)
    (folder / "config.json").write_text(json.dumps({
        "model_type": "cxr-bert", "architectures": ["CXRBertModel"],
        "auto_map": {"AutoConfig": "configuration_cxrbert.CXRBertConfig", "AutoModel": "modeling_cxrbert.CXRBertModel"},
        "vocab_size": len(tok), "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
        "intermediate_size": 64, "max_position_embeddings": 512, "projection_size": 16,
        "pad_token_id": tok.pad_token_id}, indent=2))
    config = AutoConfig.from_pretrained(folder, trust_remote_code=True)
    torch.manual_seed(seed)
    AutoModel.from_config(config, trust_remote_code=True).save_pretrained(folder)
    (folder / "STANDIN.md").write_text(f"# Stand-in for {hub_id}\n\nOur own tiny CXRBertConfig/CXRBertModel code "
                                       "behind the same auto_map, random weights. Not CXR-BERT.\n")


def build_bleurt(folder: Path, seed: int = 0) -> None:
    """A BLEURT checkpoint in the bleurt-pytorch layout, as on the Hub: an embedding projection
    (embedding size below the hidden size, as BLEURT-20), weights named ``bleurt.*`` and a
    SentencePiece ``spm.model`` ([PAD] [UNK] [CLS] [SEP] [MASK] first, as BLEURT's)."""
    import torch
    from safetensors.torch import save_file
    from transformers import RemBertConfig, RemBertForSequenceClassification
    from transformers.utils import sentencepiece_model_pb2_new as spm_pb2

    tmp = folder / "_tok"
    build_tokenizer("sp-unigram", tmp)
    pieces = json.loads((tmp / "tokenizer.json").read_text())["model"]["vocab"]
    shutil.rmtree(tmp)
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    proto = spm_pb2.ModelProto()
    kinds = {"[UNK]": spm_pb2.ModelProto.SentencePiece.UNKNOWN}
    for piece, score in [(s, 0.0) for s in specials] + [(p, s) for p, s in pieces if p not in specials]:
        entry = proto.pieces.add()
        entry.piece, entry.score = piece, float(score)
        entry.type = kinds.get(piece, spm_pb2.ModelProto.SentencePiece.CONTROL if piece in specials
                               else spm_pb2.ModelProto.SentencePiece.NORMAL)
    proto.trainer_spec.model_type = spm_pb2.TrainerSpec.UNIGRAM
    proto.trainer_spec.unk_id = 1
    (folder / "spm.model").write_bytes(proto.SerializeToString())
    cfg = {"model_type": "bleurt", "architectures": ["BleurtForSequenceClassification"],
           "vocab_size": len(proto.pieces), "embedding_size": 16, "hidden_size": 32, "num_hidden_layers": 2,
           "num_attention_heads": 2, "intermediate_size": 64, "hidden_act": "gelu", "max_position_embeddings": 512,
           "type_vocab_size": 2, "layer_norm_eps": 1e-12, "pad_token_id": 0}
    torch.manual_seed(seed)
    model = RemBertForSequenceClassification(RemBertConfig(
        vocab_size=cfg["vocab_size"], input_embedding_size=16, output_embedding_size=16, hidden_size=32,
        num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, max_position_embeddings=512,
        type_vocab_size=2, pad_token_id=0, num_labels=1))
    state = {}
    for key, value in model.state_dict().items():
        if key.endswith("position_ids"):
            continue
        key = key.replace(".encoder.embedding_hidden_mapping_in.", ".encoder.embedding_projection.")
        state[("bleurt" + key[len("rembert"):]) if key.startswith("rembert.") else key] = value.contiguous()
    save_file(state, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps(cfg, indent=2))
    (folder / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": False}))
    (folder / "STANDIN.md").write_text("# Stand-in for lucadiliello/BLEURT-20-D12\n\nRandom weights in the "
                                       "bleurt-pytorch layout. Not BLEURT.\n")


def build_ratener(folder: Path) -> None:
    """RaTE-NER in its published layout (``MIMIC_IV/``, ``Radiopaedia/``, ``all/``, label files) from
    the sample corpus: clinical reports stand in for MIMIC-IV, teaching ones for Radiopaedia."""
    src = REPO / "data" / "samples" / "ratener"
    for sub, source in (("all", "all"), ("MIMIC_IV", "clinical"), ("Radiopaedia", "teaching")):
        shutil.copytree(src / source, folder / sub)
    for name in ("idx2label.json", "label2idx.json"):
        shutil.copy(src / name, folder / name)
    (folder / "REHEARSAL.md").write_text("# REHEARSAL stand-in for Angelakeke/RaTE-NER\n\nThe radscore sample corpus "
                                       "in RaTE-NER's published layout (clinical = MIMIC_IV, teaching = "
                                       "Radiopaedia). Not RaTE-NER.\n")


def build_rate_eval(folder: Path) -> None:
    """RaTE-Eval in its published layout (Tasks 1-3, SPEC §1.10), SYNTHETIC sets made by
    ``data.synth`` from the sample corpus."""
    from data.synth.generate import generate

    tmp = folder.with_name(folder.name + "-synth")
    shutil.rmtree(tmp, ignore_errors=True)
    generate(tmp, seed=0, sizes={"rexval": 0, "task1": 60, "task2": 60, "task3": 30, "er2": 0, "bleurt": 0})
    shutil.move(str(tmp / "synthetic_rate_eval"), str(folder))
    shutil.rmtree(tmp)
    (folder / "REHEARSAL.md").write_text("# REHEARSAL stand-in for Angelakeke/RaTE-EVAL\n\nSYNTHETIC ratings of "
                                         "edited sample reports in RaTE-Eval's layout. Not RaTE-Eval.\n")


def ensure(cache: Path, hub_id: str) -> Path:
    """The stand-in folder of ``hub_id`` under ``cache``, built when missing or stale."""
    folder = cache / folder_name(hub_id)
    stamp = folder / ".standin-version"
    if stamp.is_file() and stamp.read_text() == str(VERSION):
        return folder
    if hub_id in MISSING:
        raise KeyError(f"{hub_id}: no stand-in ({MISSING[hub_id]})")
    shutil.rmtree(folder, ignore_errors=True)
    tmp = cache / f".building-{folder.name}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    if hub_id in DATASETS:
        shutil.rmtree(tmp)
        (build_ratener if hub_id == "Angelakeke/RaTE-NER" else build_rate_eval)(tmp)
    elif hub_id in BLEURT:
        build_bleurt(tmp)
    elif hub_id in CUSTOM_CODE:
        build_custom_code(hub_id, tmp)
    else:
        build_model(hub_id, tmp)
    (tmp / ".standin-version").write_text(str(VERSION))
    tmp.rename(folder)
    return folder


@contextlib.contextmanager
def substitution(cache: Path, ids: set[str] | None = None):
    """Build the stand-ins of ``ids`` (default: every one there is) under ``cache`` and resolve
    Hub ids to them inside the block (``RADSCORE_STANDINS``)."""
    cache = Path(cache).resolve()
    cache.mkdir(parents=True, exist_ok=True)
    everything = set(REAL) | set(BLEURT) | set(CUSTOM_CODE) | DATASETS
    for hub_id in sorted((ids if ids is not None else everything) - set(MISSING)):
        ensure(cache, hub_id)
    before = os.environ.get(ENV)
    os.environ[ENV] = str(cache)
    try:
        yield cache
    finally:
        if before is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = before


# --- the report's columns ------------------------------------------------------------------------
def _lora_params(real: Real, r: int, targets: list[str], n_outputs: int) -> int:
    """LoRA parameters on q/k/v/o projections of every layer, plus the reward head."""
    head_dim = real.head_dim or real.hidden // real.heads  # Gemma-7B: 16 heads of 256 on a hidden size of 3072
    q, kv = real.heads * head_dim, (real.kv_heads or real.heads) * head_dim
    shapes = {"q_proj": (real.hidden, q), "k_proj": (real.hidden, kv), "v_proj": (real.hidden, kv),
              "o_proj": (q, real.hidden)}
    per_layer = sum(r * (i + o) for name, (i, o) in shapes.items() if name in targets)
    return per_layer * real.layers + n_outputs * real.hidden


def describe_config(path: Path) -> dict:
    """What the report says of a config's real model: classes, tokenizer, pad token at load,
    parameter counts and the GPU memory estimate (empty fields when it names no known model)."""
    from train.lightning.memory import estimate_training_memory
    from train.lightning.module import adamw_kernel

    from train.lightning.configs import config_chain, init_args, read_configs

    cfg = read_configs(*config_chain(path))  # an overlay after its base
    args = init_args(cfg, "model")
    data = init_args(cfg, "data")
    trainer = cfg.get("trainer") or {}
    hub_id = args.get("backbone") or (cfg.get("scorer") or {}).get("encoder")
    real = REAL.get(hub_id) or BLEURT.get(hub_id) or CUSTOM_CODE.get(hub_id)
    out = {"real_model": hub_id, "model_class": None, "tokenizer_class": None, "pad_token_at_load": None,
           "params_real": None, "trainable_params_real": None, "gpu_memory_estimate_gib": None, "memory": None}
    if real is None:
        if hub_id in MISSING:
            out["model_class"] = f"no stand-in: {MISSING[hub_id]}"
        return out
    trainable = real.params
    if args.get("lora_r"):
        trainable = _lora_params(real, int(args["lora_r"]), list(args.get("lora_target_modules") or []), 6)
    length = args.get("max_length") or data.get("max_length")
    if length and int(length) > real.max_length:
        out["limits"] = f"failed: max_length {length} exceeds the {real.max_length} positions of {hub_id}"
    out.update(model_class=real.model_class, tokenizer_class=f"{real.tokenizer_class} ({real.tokenizer})",
               pad_token_at_load=real.pad_token,
               params_real=real.params, trainable_params_real=trainable)
    if "model" in cfg:
        # a reward batch of B pairs holds up to 2B prompts (accepted and rejected; shared ones count once)
        per_row = 2 if "reward" in str((cfg.get("model") or {}).get("class_path", "")) else 1
        memory = estimate_training_memory(real.params, trainable, architecture(real, cfg),
                                          per_row * int(data.get("batch_size") or 1),
                                          int(args.get("max_length") or data.get("max_length") or 512),
                                          trainer.get("precision"), args.get("dtype"),
                                          bool(args.get("gradient_checkpointing")),
                                          lora_targets=tuple(args.get("lora_target_modules") or ()) if args.get("lora_r") else (),
                                          lora_rank=int(args.get("lora_r") or 0),
                                          optimizer=adamw_kernel("cuda", trainer.get("gradient_clip_val"),
                                                                 trainer.get("precision")))
        out.update(gpu_memory_estimate_gib=memory["gib"], memory=memory)
    return out
