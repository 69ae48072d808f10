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
  stage's duration, nothing else; the answer is empty, so each pair's GREEN is RadEval's score of an
  empty analysis (0);
- ``radgraph``, ``radcliq``: RadEval's class imported through its registry and the method the
  adapter calls checked (their model, a RadGraph archive in the vendored DyGIE/AllenNLP format, has no
  stand-in here).

Where the package is not installed the stage is ``skipped: needs a comparator's package (…)``:
nothing of it can run, and the table rows say the same.
"""

from __future__ import annotations

import contextlib
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
    loaded = module.load(name)  # an ImportError here is a failure: the package is installed
    if name in ("chexbert", "semb"):
        with chexbert_standin(Path(workdir)):
            with mock.patch.object(module, "_device", lambda: "cpu"):
                _check_scores(name, module.score(name, refs, cands), len(refs))
        return
    if name == "green":
        with green_standin(Path(workdir)):
            _check_scores(name, module.score(name, refs, cands), len(refs))
        return
    if not callable(getattr(loaded, "compute", None)):
        raise RuntimeError(f"RadEval's {module.REGISTRY_NAME[name]!r} class {loaded.__name__} has no compute() "
                           "(the adapter calls compute(refs, hyps, per_sample=True))")


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

    folder.mkdir(parents=True, exist_ok=True)
    if (folder / "config.json").is_file():
        return folder
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
    return folder


@contextlib.contextmanager
def green_standin(workdir: Path):
    """RadEval's GREEN loads (StanfordAIMI/GREEN-radllama2-7b, model and tokenizer) answered by
    :func:`build_green_standin`; the keyword arguments RadEval passes go through unchanged."""
    import transformers

    from radeval.metrics.green_score import green as target

    folder = build_green_standin(Path(workdir) / "green-standin")

    def redirect(cls):
        class _Loader:
            @staticmethod
            def from_pretrained(_model_id, *args, **kwargs):
                return cls.from_pretrained(folder, *args, **kwargs)
        return _Loader

    with mock.patch.object(target, "AutoModelForCausalLM", redirect(transformers.AutoModelForCausalLM)), \
            mock.patch.object(target, "AutoTokenizer", redirect(transformers.AutoTokenizer)):
        yield folder
