"""The papers' models as published, for the GPU memory model and everything built on it: what each
model is (its transformers config and model class, tokenizer, parameter count, width, depth and
attention shape, from its Hub repository), the :class:`~train.lightning.memory.Architecture` the
estimate takes of it, and the transformers config equal to a BLEURT checkpoint's ``config.json``.

Nothing here builds or downloads a model. :mod:`train.lightning.memory_probe` builds these
architectures at their published sizes with random weights; the stand-ins of
:mod:`train.rehearsal.standins` copy their classes and tokenizers at tiny sizes, and the rehearsal
report gives their sizes and memory estimates; :mod:`train.bleurt.convert` loads BLEURT checkpoints through :func:`bleurt_hf_config`.
"""

from __future__ import annotations

from dataclasses import dataclass

from train.lightning.memory import DECODERS, EAGER_ONLY, Architecture, SpanHead


@dataclass(frozen=True)
class Real:
    """The real model: its classes, tokenizer kind, size and attention shape."""
    config_class: str
    model_class: str  # the class a from_pretrained of the id loads (AutoModel*)
    tokenizer: str  # wordpiece | mpnet-wordpiece | sp-unigram | sp-bpe | byte-bpe-llama3 | byte-bpe-qwen | byte-bpe-gpt2
    pad_token: str | None  # the real tokenizer's pad token at load (None: it has none)
    params: int
    hidden: int
    layers: int
    heads: int
    tokenizer_class: str = "PreTrainedTokenizerFast"  # the real tokenizer_config.json's class
    kv_heads: int | None = None
    num_labels: int | None = None  # a token classifier with its own label set (Medical-NER)
    max_length: int = 512  # positions the real model was trained for (its config.json)
    intermediate: int | None = None  # the MLP's size (config.json intermediate_size); None: 4·hidden
    vocab: int = 0  # vocab_size (config.json); 0: not recorded
    position_buckets: int = 0  # DeBERTa-v2/v3 relative-position buckets (config.json)
    head_dim: int | None = None  # per-head width where it is not hidden/heads (config.json head_dim: Gemma)
    rotary_fraction: float = 1.0  # the share of a head that RoPE rotates (config.json partial_rotary_factor: Phi)
    source: str = "the Hub repository's config.json, tokenizer_config.json and model card"


# Where the facts come from: each model's Hub repository (config.json for the classes, sizes and
# positions; tokenizer_config.json / tokenizer.json for the tokenizer class and special tokens; the
# model card for the parameter count), read when this table was written. Padding side: not listed,
# because the stand-in tokenizer declares the real tokenizer class and so gets that class's default;
# the reward model pools the last non-pad token whatever the side (radscore.reward_model).


REAL = {
    "microsoft/deberta-v3-base": Real("DebertaV2Config", "DebertaV2Model", "sp-unigram", "[PAD]", 184_000_000, 768, 12, 12, tokenizer_class="DebertaV2Tokenizer",
                                       intermediate=3072, vocab=128_100, position_buckets=256),
    "blaze999/Medical-NER": Real("DebertaV2Config", "DebertaV2ForTokenClassification", "sp-unigram", "[PAD]",
                                 184_000_000, 768, 12, 12, num_labels=41, tokenizer_class="DebertaV2Tokenizer",
                                 intermediate=3072, vocab=128_100, position_buckets=256),
    "microsoft/BiomedNLP-BiomedBERT-base-uncased-abstract-fulltext": Real("BertConfig", "BertModel", "wordpiece", "[PAD]",
                                                                          110_000_000, 768, 12, 12, tokenizer_class="BertTokenizer"),
    "bionlp/bluebert_pubmed_mimic_uncased_L-12_H-768_A-12": Real("BertConfig", "BertModel", "wordpiece", "[PAD]",
                                                                  110_000_000, 768, 12, 12, tokenizer_class="BertTokenizer"),
    "cambridgeltl/SapBERT-from-PubMedBERT-fulltext": Real("BertConfig", "BertModel", "wordpiece", "[PAD]",
                                                          110_000_000, 768, 12, 12, tokenizer_class="BertTokenizer"),
    "ncbi/MedCPT-Query-Encoder": Real("BertConfig", "BertModel", "wordpiece", "[PAD]", 110_000_000, 768, 12, 12, tokenizer_class="BertTokenizer"),
    "FremyCompany/BioLORD-2023-C": Real("MPNetConfig", "MPNetModel", "mpnet-wordpiece", "<pad>", 110_000_000, 768, 12, 12, tokenizer_class="MPNetTokenizer",
                                        vocab=30_527),
    "meta-llama/Meta-Llama-3-8B": Real("LlamaConfig", "LlamaForCausalLM", "byte-bpe-llama3", None,
                                       8_030_000_000, 4096, 32, 32, kv_heads=8, max_length=8192,
                                       intermediate=14_336, vocab=128_256),
    "lmsys/vicuna-7b-v1.5": Real("LlamaConfig", "LlamaForCausalLM", "sp-bpe", None, 6_740_000_000, 4096, 32, 32, tokenizer_class="LlamaTokenizer", max_length=4096,
                                 intermediate=11_008, vocab=32_000),
    "epfl-llm/meditron-7b": Real("LlamaConfig", "LlamaForCausalLM", "sp-bpe", None, 6_740_000_000, 4096, 32, 32, tokenizer_class="LlamaTokenizer", max_length=2048,
                                 intermediate=11_008, vocab=32_017),
    "google/gemma-7b": Real("GemmaConfig", "GemmaForCausalLM", "sp-bpe-gemma", "<pad>", 8_540_000_000, 3072, 28, 16, tokenizer_class="GemmaTokenizer", max_length=8192,
                            intermediate=24_576, vocab=256_000, head_dim=256),
    "Qwen/Qwen1.5-7B": Real("Qwen2Config", "Qwen2ForCausalLM", "byte-bpe-qwen", "<|endoftext|>", 7_720_000_000, 4096, 32, 32, tokenizer_class="Qwen2Tokenizer", max_length=32768,
                            intermediate=11_008, vocab=151_936),
    "microsoft/phi-2": Real("PhiConfig", "PhiForCausalLM", "byte-bpe-gpt2", None, 2_780_000_000, 2560, 32, 32, tokenizer_class="CodeGenTokenizer", max_length=2048,
                            intermediate=10_240, vocab=51_200, rotary_fraction=0.4),
    # the ablation profile's other encoders and its BERTScore model
    "StanfordAIMI/RadBERT": Real("BertConfig", "BertModel", "wordpiece", "[PAD]", 110_000_000, 768, 12, 12,
                                 tokenizer_class="BertTokenizer"),
    "distilbert/distilroberta-base": Real("RobertaConfig", "RobertaModel", "byte-bpe-roberta", "<pad>", 82_000_000,
                                          768, 6, 12, tokenizer_class="RobertaTokenizer"),
}
# BLEURT-20-D12 (bleurt-pytorch layout: config.json with model_type "bleurt", weights named
# bleurt.*, spm.model); train.bleurt.convert turns it into RemBertForSequenceClassification
BLEURT = {"lucadiliello/BLEURT-20-D12": Real("BleurtConfig", "BleurtForSequenceClassification", "sp-unigram", "[PAD]",
                                             167_000_000, 768, 12, 12, tokenizer_class="BleurtSPTokenizer",
                                             intermediate=3072, vocab=119_547)}
# CXR-BERT and BioViL-T ship their own modelling code (CXRBertConfig/CXRBertModel, loaded with
# trust_remote_code=True)
CUSTOM_CODE = {
    "microsoft/BiomedVLP-CXR-BERT-specialized": Real("CXRBertConfig", "CXRBertModel", "wordpiece", "[PAD]",
                                                     110_000_000, 768, 12, 12, tokenizer_class="BertTokenizer"),
    "microsoft/BiomedVLP-BioViL-T": Real("CXRBertConfig", "CXRBertModel", "wordpiece", "[PAD]", 110_000_000, 768,
                                         12, 12, tokenizer_class="BertTokenizer"),
}


def architecture(real: Real, cfg: dict | None = None):
    """The memory estimate's :class:`~train.lightning.memory.Architecture` of a real model: its
    family by config class (Llama/Qwen2 and Gemma decoders: gated MLP, RMSNorm, SDPA; Phi: parallel
    attention and MLP under one LayerNorm, SDPA; DeBERTa-v2: eager disentangled attention; MPNet:
    eager attention with a relative-position bias; the BERT-style rest, BLEURT included: SDPA), and
    the task head the config trains (a token classifier, the reward heads, the BLEURT regressor, or
    the PURE span classifier with the config's sizes)."""
    cfg = cfg or {}
    model = cfg.get("model") or {}
    class_path = str(model.get("class_path", ""))
    args = model.get("init_args") or {}
    family = {"LlamaConfig": "llama", "Qwen2Config": "llama", "GemmaConfig": "gemma", "PhiConfig": "phi",
              "MPNetConfig": "mpnet", "DebertaV2Config": "deberta-v2"}.get(real.config_class, "bert")
    # transformers runs DeBERTa-v2 and MPNet eagerly (no SDPA path); BERT, the decoders and BLEURT
    # (bleurt_hf_config: a BertConfig where the embedding size equals the hidden size,
    # as the table records for BLEURT-20-D12) default to SDPA
    attention = "eager" if family in EAGER_ONLY else "sdpa"
    reward = "reward" in class_path
    decoder = family in DECODERS
    span = None
    if class_path.endswith("SpanTagger"):
        from radscore.span_model import SPAN_CLASSES

        span = SpanHead(max_width=int(args.get("max_span_width", 8)), width_dim=int(args.get("width_dim", 150)),
                        mlp_hidden=int(args.get("mlp_hidden", 150)), mlp_layers=int(args.get("mlp_layers", 2)),
                        dropout=float(args.get("dropout", 0.2)) > 0, classes=len(SPAN_CLASSES))
    head = "span" if span else "token" if ("ner" in class_path or real.num_labels) else "sequence"
    labels = 6 if reward else (real.num_labels or (11 if head == "token" else 1))
    # the reward model switches every dropout off (radscore.reward_model.disable_dropout); decoders
    # other than Phi have none
    dropout = not decoder and not reward
    return Architecture(real.hidden, real.layers, real.heads, intermediate=real.intermediate, kv_heads=real.kv_heads,
                        family=family, attention=attention, vocab=real.vocab, position_buckets=real.position_buckets,
                        hidden_dropout=dropout, attention_dropout=dropout, num_labels=labels, head=head,
                        head_dim=real.head_dim, span=span, rotary_fraction=real.rotary_fraction)


def bleurt_hf_config(bleurt_cfg: dict, classifier_dropout: float | None = None):
    """The RemBERT (with an embedding projection) or BERT config equal to a BLEURT config;
    ``classifier_dropout`` overrides the checkpoint's."""
    from transformers import BertConfig, RemBertConfig

    common = {k: bleurt_cfg[k] for k in (
        "vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
        "hidden_act", "max_position_embeddings", "type_vocab_size", "initializer_range",
        "layer_norm_eps", "pad_token_id") if k in bleurt_cfg}
    common.update(num_labels=1, hidden_dropout_prob=bleurt_cfg.get("hidden_dropout_prob", 0.1),
                  attention_probs_dropout_prob=bleurt_cfg.get("attention_probs_dropout_prob", 0.1))
    dropout = bleurt_cfg.get("classifier_dropout") if classifier_dropout is None else classifier_dropout
    embedding = bleurt_cfg.get("embedding_size")
    if embedding is not None and embedding != bleurt_cfg.get("hidden_size", 768):
        return RemBertConfig(input_embedding_size=embedding, output_embedding_size=embedding,
                             classifier_dropout_prob=common["hidden_dropout_prob"] if dropout is None else dropout,
                             **common)
    return BertConfig(classifier_dropout=dropout, **common)
