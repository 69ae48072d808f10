"""The rehearsal of each comparator's code path (:mod:`train.evaluation.comparators`), on stand-ins.

What runs for each comparator, so that a user's first run with the package and its models does
not discover an import or API error:

- ``cider``: the real scorer (pycocoevalcap, no model) on a few pairs;
- ``spice``: the real scorer where Java and the CoreNLP jars are here, else the stage says what
  is missing;
- ``chexbert``, ``semb``: RadEval's ``F1CheXbert`` and ``semantic_embedding_scores`` end to end
  with a stand-in of the same architecture: a 2-layer BERT (hidden size 32, random seeded weights,
  the 14 CheXbert heads) saved as the ``chexbert.pth`` RadEval downloads, its config in place of
  bert-base-uncased's and the packaged MiniLM tokenizer (bert-base-uncased's uncased vocabulary). The
  three Hub calls of RadEval's module are replaced for the stage's duration, nothing else;
- ``green``: RadEval's ``GreenMetric`` end to end (its chat template, tokenisation, greedy
  ``generate``, decoding and the parsing of the answer into a score) with a stand-in of the same
  family and tokenizer kind: the Llama-2 stand-in of :mod:`train.rehearsal.standins` (built for
  lmsys/vicuna-7b-v1.5: LlamaForCausalLM, SentencePiece-BPE LlamaTokenizer), its weights set so that
  its greedy answer is the end-of-sequence token at once (a random model would generate to GREEN's
  2,048 tokens: minutes on a CPU). The two Hub loads of RadEval's GREEN module are replaced for the
  stage's duration, nothing else. GREEN's chat markers are tokens of the stand-in's tokenizer (its
  sample-corpus vocabulary cannot spell them), so RadEval cuts the prompt off the decoded output as
  with the real model; the answer left is empty and each pair's GREEN is RadEval's score of an empty
  analysis (0);
- ``radgraph``: RadEval's ``RadGraphMetric`` end to end (its vendored DyGIE/AllenNLP RadGraph:
  tokenisation, span enumeration, NER and relation decoding, the F1 of the two graphs) on a RadGraph
  archive built here as RadEval extracts one (``config.json``, the AllenNLP ``vocabulary/`` with
  RadGraph's entity and relation labels, ``weights.th`` of a DyGIE model made by RadEval's own classes
  on a tiny random BERT with the MiniLM vocabulary), RadEval's cache folder pointed at it;
- ``radcliq``: RadEval's ``RadCliQ`` end to end on the RadGraph and CheXbert stand-ins and a 6-layer
  random RoBERTa with a byte-level BPE tokenizer for its BERTScore (distilroberta-base, layer 5,
  RadEval's rescale baseline), BLEU-2 as is.

RadEval 2.2.1's RadGraph imports itself as ``RadEval…`` (the adapter's ``alias_radeval``). The
adapter's own device choice (CheXbert, semb) is the CPU in the stage; RadEval's classes choose theirs.

Where the package is not installed the stage is ``skipped: needs a comparator's package (…)``:
nothing of it can run, and the table rows say the same.
"""

from __future__ import annotations

import contextlib
from multiprocessing.pool import ThreadPool
from pathlib import Path
from unittest import mock

import numpy as np

CHEXBERT_HEADS = 13  # 4-way heads, then one 2-way head (RadEval's _CheXbertLabeler)
PAIRS = (["No pleural effusion. Heart size is normal.", "Small left pleural effusion.", "Mild cardiomegaly."],
         ["Small right pleural effusion. Heart size is normal.", "Small left pleural effusion.", "No cardiomegaly."])


class StageSkipped(RuntimeError):
    """A stage that cannot run on this machine; the message is its status (``skipped: needs …``)."""


def _pairs() -> tuple[list[str], list[str]]:
    refs, cands = PAIRS
    return list(refs), list(cands)


def _check_scores(name: str, scores, n: int) -> None:
    scores = np.asarray(scores, dtype=np.float64)
    if scores.shape != (n,) or not np.all(np.isfinite(scores)):
        raise RuntimeError(f"{name}: expected {n} finite scores, got {scores!r}")


def rehearse_comparator(name: str, workdir: Path) -> None:
    """Run ``name``'s code path on stand-ins; raises :class:`StageSkipped` when its package is absent."""
    from train.evaluation import comparators

    module = comparators.adapter(name)
    refs, cands = _pairs()
    if module.__name__.endswith("coco_caption"):
        if module._package_dir() is None:
            raise StageSkipped(f"skipped: needs a comparator's package ({module.INSTALL})")
        reason = module.needs(name)
        if reason is not None:  # SPICE without Java or CoreNLP: what a real run meets too
            raise StageSkipped(reason.replace("skipped: needs ", "skipped: needs a comparator's package or model: ", 1))
        _check_scores(name, module.score(name, refs, cands), len(refs))
        return
    if not module.importable():
        raise StageSkipped(f"skipped: needs a comparator's package ({module.INSTALL})")
    module.load(name)  # an ImportError here is a failure: the package is installed
    standin = {"chexbert": chexbert_standin, "semb": chexbert_standin, "green": green_standin,
               "radgraph": radgraph_standin, "radcliq": radcliq_standin}[name]
    with standin(Path(workdir)), mock.patch.object(module, "_device", lambda: "cpu"):
        _check_scores(name, module.score(name, refs, cands), len(refs))


@contextlib.contextmanager
def chexbert_standin(workdir: Path):
    """RadEval's CheXbert loads (bert-base-uncased's config and tokenizer, ``chexbert.pth`` from
    StanfordAIMI/RRG_scorers) answered by a tiny random labeller of the same architecture."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    from radeval.metrics.f1chexbert import f1chexbert as target
    from radscore.models import PACKAGED_MINILM, resolve_model_path

    tokenizer_dir = resolve_model_path(PACKAGED_MINILM)
    vocab = BertTokenizer.from_pretrained(tokenizer_dir).vocab_size
    config = BertConfig(vocab_size=vocab, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=512)
    workdir.mkdir(parents=True, exist_ok=True)
    checkpoint = workdir / "chexbert-standin.pth"
    torch.manual_seed(0)
    labeller = torch.nn.Module()
    labeller.bert = BertModel(config)
    labeller.linear_heads = torch.nn.ModuleList([*(torch.nn.Linear(32, 4) for _ in range(CHEXBERT_HEADS)),
                                                 torch.nn.Linear(32, 2)])
    torch.save({"model_state_dict": labeller.state_dict()}, checkpoint)

    class _Config:
        @staticmethod
        def from_pretrained(*_args, **_kwargs):
            return config

    class _Tokenizer:
        @staticmethod
        def from_pretrained(*_args, **_kwargs):
            return BertTokenizer.from_pretrained(tokenizer_dir)

    with mock.patch.object(target, "AutoConfig", _Config), mock.patch.object(target, "BertTokenizer", _Tokenizer), \
            mock.patch.object(target, "hf_hub_download", lambda *a, **k: str(checkpoint)):
        yield


GREEN_FAMILY = "lmsys/vicuna-7b-v1.5"  # the Llama-2 stand-in (GREEN-radllama2-7b is a Llama-2 7B)
CHAT_MARKERS = ("<|user|>", "<|system|>", "<|assistant|>")  # GREEN's chat template; its answer follows the last


def build_green_standin(folder: Path) -> Path:
    """The Llama-2 stand-in, its weights set so that greedy decoding answers end-of-sequence first:
    residual dimension 0 is a constant 100 (every token's embedding; no layer writes to it), the final
    norm keeps only that dimension and the output layer reads it into the end-of-sequence logit alone."""
    import torch
    from transformers import AutoTokenizer, LlamaForCausalLM

    from train.rehearsal.standins import build_model

    ready = folder / ".green-standin"  # written last: a build cut short is made again, never reused
    if ready.is_file():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    build_model(GREEN_FAMILY, folder)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.add_tokens(list(CHAT_MARKERS))  # the sample corpus's vocabulary cannot spell them
    tokenizer.save_pretrained(folder)
    eos = tokenizer.eos_token_id
    model = LlamaForCausalLM.from_pretrained(folder)
    model.resize_token_embeddings(len(tokenizer))
    with torch.no_grad():
        model.model.embed_tokens.weight[:, 0] = 100.0
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight[0].zero_()
            layer.mlp.down_proj.weight[0].zero_()
        model.model.norm.weight.zero_()
        model.model.norm.weight[0] = 1.0
        model.lm_head.weight.zero_()
        model.lm_head.weight[eos, 0] = 1.0
    model.save_pretrained(folder)
    ready.write_text("end-of-sequence at once\n")
    return folder


def _redirect(auto_class, folder: Path):
    """A stand-in for ``auto_class`` in a RadEval module: ``from_pretrained(<any id>, **kwargs)``
    loads ``folder`` with the keyword arguments RadEval passes."""
    class _Loader:
        @staticmethod
        def from_pretrained(_model_id, *args, **kwargs):
            return auto_class.from_pretrained(folder, *args, **kwargs)
    return _Loader


@contextlib.contextmanager
def green_standin(workdir: Path):
    """RadEval's GREEN loads (StanfordAIMI/GREEN-radllama2-7b, model and tokenizer) answered by
    :func:`build_green_standin`; the keyword arguments RadEval passes go through unchanged."""
    import transformers

    from radeval.metrics.green_score import green as target

    folder = build_green_standin(Path(workdir) / "green-standin")

    with mock.patch.object(target, "AutoModelForCausalLM", _redirect(transformers.AutoModelForCausalLM, folder)), \
            mock.patch.object(target, "AutoTokenizer", _redirect(transformers.AutoTokenizer, folder)):
        yield folder


RADGRAPH_ENTITIES = ("ANAT-DP", "OBS-DP", "OBS-U", "OBS-DA")  # RadGraph's entity types
RADGRAPH_RELATIONS = ("modify", "located_at", "suggestive_of")  # and its relation types


def _dygie_config(bert_folder: Path, max_span_width: int = 8) -> dict:
    """A DyGIE++ config as RadGraph's archives hold it (the fields RadEval's loader reads), with
    small dimensions; the embedder and the token indexer name ``bert_folder``."""
    bert = {"type": "pretrained_transformer_mismatched", "model_name": str(bert_folder), "max_length": 512}
    return {
        "dataset_reader": {"type": "dygie", "max_span_width": max_span_width, "token_indexers": {"bert": bert}},
        "model": {
            "type": "dygie",
            "embedder": {"token_embedders": {"bert": bert}},
            "initializer": {}, "module_initializer": {},
            "feature_size": 8, "max_span_width": max_span_width, "target_task": "relation",
            "feedforward_params": {"num_layers": 2, "hidden_dims": 16, "dropout": 0.0},
            "loss_weights": {"ner": 0.2, "relation": 1.0, "coref": 0.0, "events": 0.0},
            "modules": {"coref": {"spans_per_word": 0.3, "max_antecedents": 10, "coref_prop": 0},
                        "ner": {}, "relation": {"spans_per_word": 0.5},
                        "events": {"trigger_spans_per_word": 0.3, "argument_spans_per_word": 0.8,
                                   "loss_weights": {"trigger": 0.2, "arguments": 1.0}}},
        },
    }


def build_radgraph_standin(cache: Path, model_type: str, seed: int = 0) -> Path:
    """``<cache>/<model_type>/`` as RadEval extracts a RadGraph archive there (``config.json``, an
    AllenNLP ``vocabulary/`` and ``weights.th``): a DyGIE model built by RadEval's own vendored
    classes on a tiny random BERT (the packaged MiniLM's uncased vocabulary), random seeded weights."""
    import json

    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    from radscore.models import PACKAGED_MINILM, resolve_model_path

    folder = Path(cache) / model_type
    if (folder / "weights.th").is_file():
        return folder
    bert_folder = Path(cache) / f"{model_type}-bert"
    tokenizer = BertTokenizer.from_pretrained(resolve_model_path(PACKAGED_MINILM))
    torch.manual_seed(seed)
    BertModel(BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                         num_attention_heads=2, intermediate_size=64)).save_pretrained(bert_folder)
    tokenizer.save_pretrained(bert_folder)
    vocabulary = folder / "vocabulary"
    vocabulary.mkdir(parents=True, exist_ok=True)
    (vocabulary / "non_padded_namespaces.txt").write_text("*tags\n*labels\n")
    (vocabulary / f"{model_type}__ner_labels.txt").write_text("\n".join(("", *RADGRAPH_ENTITIES)) + "\n")
    (vocabulary / f"{model_type}__relation_labels.txt").write_text("\n".join(RADGRAPH_RELATIONS) + "\n")
    config = _dygie_config(bert_folder)
    (folder / "config.json").write_text(json.dumps(config, indent=2))

    from radeval.metrics.radgraph._vendor import core

    vocab = core.Vocabulary.from_files(str(vocabulary))
    embedder = core.text_field_embedders.BasicTextFieldEmbedder(
        {"bert": core.token_embedders.PretrainedTransformerMismatchedEmbedder(model_name=str(bert_folder),
                                                                              max_length=512)})
    model_args = {k: v for k, v in config["model"].items()
                  if k not in ("type", "embedder", "initializer", "module_initializer")}
    torch.manual_seed(seed)
    model = core.dygie.DyGIE(vocab=vocab, embedder=embedder, **model_args)
    torch.save(model.state_dict(), folder / "weights.th")
    return folder


@contextlib.contextmanager
def radgraph_standin(workdir: Path):
    """RadEval's RadGraph cache (``radgraph`` and ``radgraph-xl``, which it would download from
    StanfordAIMI/RRG_scorers and extract) pointed at :func:`build_radgraph_standin`'s folders."""
    from train.evaluation.comparators.radeval_metrics import alias_radeval

    alias_radeval()
    from radeval.metrics.radgraph._vendor import core

    cache = Path(workdir) / "radgraph-cache"
    for model_type in ("radgraph", "radgraph-xl"):
        build_radgraph_standin(cache, model_type)
    with mock.patch.object(core, "CACHE_DIR", str(cache)):
        yield cache


def build_roberta_standin(folder: Path) -> Path:
    """The rehearsal's distilroberta-base stand-in (byte-level BPE RobertaTokenizer, RobertaModel)
    with distilroberta-base's 6 layers, since RadCliQ-v1's BERTScore reads layer 5."""
    import torch
    from transformers import AutoConfig, RobertaModel

    from train.rehearsal.standins import build_model

    if (folder / "config.json").is_file():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    build_model("distilbert/distilroberta-base", folder)
    config = AutoConfig.from_pretrained(folder)
    config.num_hidden_layers = 6
    torch.manual_seed(0)
    RobertaModel(config).save_pretrained(folder)
    return folder


@contextlib.contextmanager
def radcliq_standin(workdir: Path):
    """RadCliQ-v1's four parts on stand-ins: RadGraph (:func:`radgraph_standin`), CheXbert
    (:func:`chexbert_standin`), BERTScore's distilroberta-base (:func:`build_roberta_standin`, with
    RadEval's own rescale baseline for distilroberta-base) and BLEU-2 (no model)."""
    import transformers

    from radeval.metrics.bertscore._vendor import utils as bertscore_utils

    roberta = build_roberta_standin(Path(workdir) / "distilroberta-standin")

    with contextlib.ExitStack() as stack:
        stack.enter_context(radgraph_standin(workdir))
        stack.enter_context(chexbert_standin(Path(workdir)))
        stack.enter_context(mock.patch.object(bertscore_utils, "AutoModel", _redirect(transformers.AutoModel, roberta)))
        # BERTScore's idf counts run in a thread pool here: its process pool forks, and a fork of a process that
        # already runs threads (Ray, tokenizers; a pytest worker) can deadlock, as a make test run did (same counts)
        stack.enter_context(mock.patch.object(bertscore_utils, "Pool", ThreadPool))
        stack.enter_context(mock.patch.object(bertscore_utils, "AutoTokenizer",
                                              _redirect(transformers.AutoTokenizer, roberta)))
        yield
