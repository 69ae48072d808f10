"""Baseline report metrics for meta-evaluation, through maintained libraries.

===========  =====================================================================================
name         what it is
===========  =====================================================================================
``bleu4``    nltk ``sentence_bleu``, uniform weights over 1-4-grams, smoothing ``method1`` (our
             choice: without smoothing a pair that shares no 4-gram scores 0 however close it is)
``bleu2``    the same over 1-2-grams (RadCliQ's BLEU-2 feature)
``rougeL``   rouge-score ``RougeScorer(["rougeL"], use_stemmer=True)``, F-measure
``bertscore`` bert-score's F1 with a local model (default: the packaged all-MiniLM-L6-v2, its last
             layer, no idf, no baseline rescaling: rescaling files exist only for hub models)
``meteor``   nltk ``meteor_score``; it needs the WordNet corpus, which this machine cannot download:
             when it is missing the metric is reported as *unavailable*, never approximated
===========  =====================================================================================

Trivial baselines (:data:`TRIVIAL`): no model and no knowledge of radiology. They sit next to every
metric on synthetic data, so that a reader sees what a benchmark can discriminate: a benchmark
that these solve measures its own generator, not the metrics.

======================  ===========================================================================
``diff_hunks``          minus the number of change hunks between the two token lists (difflib
                        ``SequenceMatcher(autojunk=False).get_opcodes()``, non-equal ones)
``negation_keywords``   minus the absolute difference of the negation-cue counts (:data:`NEGATION_CUES`)
``unigram_f1``          F1 of the token multisets (clipped counts), 1 when both texts are empty
======================  ===========================================================================

Every function takes parallel lists of references and candidates and returns a float64 array.
Text is lower-cased and split into words and punctuation marks by one regular expression (our
choice: nltk's ``word_tokenize`` needs the punkt resource, which is not on these machines either).
"""

from __future__ import annotations

import math
import re
from typing import Callable, Sequence

import numpy as np

from radscore.models import PACKAGED_MINILM, resolve_model_path

TRIVIAL = ("diff_hunks", "negation_keywords", "unigram_f1")
BASELINES = ("bleu4", "bleu2", "rougeL", "bertscore", "meteor", *TRIVIAL)
TRIVIAL_LABELS = {"diff_hunks": "trivial: difflib change hunks (-count)",
                  "negation_keywords": "trivial: negation-cue count difference (-|Δ|)",
                  "unigram_f1": "trivial: unigram F1"}
NEGATION_CUES = frozenset({"no", "not", "without", "negative", "free", "absent", "none", "neither", "nor",
                           "never", "resolved", "unremarkable"})  # our choice: common English cues
_TOKEN = re.compile(r"\w+(?:[-'.]\w+)*|[^\w\s]")


class BaselineUnavailable(RuntimeError):
    """A baseline whose resources are missing on this machine (e.g. METEOR without WordNet)."""


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def _check(refs: Sequence[str], cands: Sequence[str]) -> None:
    if len(refs) != len(cands):
        raise ValueError(f"{len(refs)} references and {len(cands)} candidates: they must pair up")
    for k, (r, c) in enumerate(zip(refs, cands)):
        if not isinstance(r, str) or not isinstance(c, str):
            raise TypeError(f"pair {k}: reference and candidate must be strings, got "
                            f"{type(r).__name__} and {type(c).__name__}")


def bleu(refs: Sequence[str], cands: Sequence[str], n: int = 4) -> np.ndarray:
    """BLEU-n of each candidate against its reference (0 when either text has no token)."""
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    _check(refs, cands)
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    smooth = SmoothingFunction().method1
    weights = tuple([1.0 / n] * n)
    out = np.zeros(len(refs))
    for k, (r, c) in enumerate(zip(refs, cands)):
        rt, ct = tokenize(r), tokenize(c)
        if rt and ct:
            out[k] = sentence_bleu([rt], ct, weights=weights, smoothing_function=smooth)
    return out


def rouge_l(refs: Sequence[str], cands: Sequence[str]) -> np.ndarray:
    """ROUGE-L F-measure (rouge-score, Porter stemmer)."""
    from rouge_score import rouge_scorer

    _check(refs, cands)
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    return np.array([scorer.score(r, c)["rougeL"].fmeasure for r, c in zip(refs, cands)], dtype=np.float64)


def bertscore(refs: Sequence[str], cands: Sequence[str], model: str = PACKAGED_MINILM,
              num_layers: int | None = None, batch_size: int = 64, device: str = "cpu") -> np.ndarray:
    """BERTScore F1 with a local model folder (or ``packaged:all-MiniLM-L6-v2``); ``num_layers``
    (the layer whose states are matched) defaults to the model's last layer."""
    import logging

    from bert_score import BERTScorer
    from transformers import AutoConfig

    _check(refs, cands)
    if not len(refs):
        return np.zeros(0)
    logging.getLogger("transformers").setLevel(logging.ERROR)
    path = resolve_model_path(model)
    if num_layers is None:
        num_layers = int(AutoConfig.from_pretrained(path).num_hidden_layers)
    scorer = BERTScorer(model_type=path, num_layers=num_layers, batch_size=batch_size,
                        device=device, idf=False, rescale_with_baseline=False)
    _, _, f1 = scorer.score(list(cands), list(refs), verbose=False)
    return f1.double().numpy()


def meteor_unavailable_reason() -> str | None:
    """``None`` when METEOR can run here, else why it cannot."""
    try:
        from nltk.corpus import wordnet

        wordnet.ensure_loaded()
    except LookupError:
        return "nltk's WordNet corpus is not installed and cannot be downloaded here"
    except ImportError as exc:  # pragma: no cover - nltk is a train dependency
        return f"nltk is missing ({exc})"
    return None


def meteor(refs: Sequence[str], cands: Sequence[str]) -> np.ndarray:
    """METEOR (nltk); raises :class:`BaselineUnavailable` without WordNet."""
    reason = meteor_unavailable_reason()
    if reason is not None:
        raise BaselineUnavailable(reason)
    from nltk.translate.meteor_score import meteor_score

    _check(refs, cands)
    return np.array([meteor_score([tokenize(r)], tokenize(c)) for r, c in zip(refs, cands)], dtype=np.float64)


def diff_hunks(refs: Sequence[str], cands: Sequence[str]) -> np.ndarray:
    """Minus the number of difflib change hunks between the token lists (0 for identical texts)."""
    from difflib import SequenceMatcher

    _check(refs, cands)
    return np.array([0.0 - sum(op != "equal" for op, *_ in
                               SequenceMatcher(None, tokenize(r), tokenize(c), autojunk=False).get_opcodes())
                     for r, c in zip(refs, cands)], dtype=np.float64)


def negation_keywords(refs: Sequence[str], cands: Sequence[str]) -> np.ndarray:
    """Minus the absolute difference of the number of negation cues in the two texts."""
    _check(refs, cands)

    def count(text: str) -> int:
        return sum(t in NEGATION_CUES for t in tokenize(text))

    return np.array([0.0 - abs(count(r) - count(c)) for r, c in zip(refs, cands)], dtype=np.float64)


def unigram_f1(refs: Sequence[str], cands: Sequence[str]) -> np.ndarray:
    """F1 of the token multisets: 2 * overlap / (len(ref) + len(cand)), overlap with clipped counts."""
    from collections import Counter

    _check(refs, cands)
    out = np.zeros(len(refs))
    for k, (r, c) in enumerate(zip(refs, cands)):
        a, b = Counter(tokenize(r)), Counter(tokenize(c))
        total = sum(a.values()) + sum(b.values())
        out[k] = 1.0 if total == 0 else 2.0 * sum((a & b).values()) / total
    return out


def _fn(name: str) -> Callable[..., np.ndarray]:
    table = {"bleu4": lambda r, c, **kw: bleu(r, c, 4), "bleu2": lambda r, c, **kw: bleu(r, c, 2),
             "rougeL": lambda r, c, **kw: rouge_l(r, c), "bertscore": bertscore,
             "meteor": lambda r, c, **kw: meteor(r, c), "diff_hunks": lambda r, c, **kw: diff_hunks(r, c),
             "negation_keywords": lambda r, c, **kw: negation_keywords(r, c),
             "unigram_f1": lambda r, c, **kw: unigram_f1(r, c)}
    if name not in table:
        raise ValueError(f"unknown baseline {name!r}; expected one of {list(BASELINES)}")
    return table[name]


def score_baselines(refs: Sequence[str], cands: Sequence[str], names: Sequence[str] = BASELINES,
                    bertscore_model: str = PACKAGED_MINILM) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """``(scores by name, unavailable name -> reason)``; an unavailable metric has no scores."""
    scores, unavailable = {}, {}
    for name in names:
        fn = _fn(name)
        try:
            scores[name] = fn(refs, cands, model=bertscore_model) if name == "bertscore" else fn(refs, cands)
        except BaselineUnavailable as exc:
            unavailable[name] = str(exc)
    return scores, unavailable


# --- beside a trained model: the same test rows, scored by text alone ---------------------------------
#: the baselines printed beside a trained model's test metrics: no model, seconds on a test split
#: (BLEU-4 for reference and the trivial ones)
BESIDE_MODEL = ("bleu4", *TRIVIAL)


def _statistic(fn, x: np.ndarray, y: np.ndarray) -> float:
    """A scipy statistic, ``nan`` when it is undefined (fewer than two rows or a constant side)."""
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(fn(x, y).statistic)


def rating_baselines(refs: Sequence[str], cands: Sequence[str], target: Sequence[float],
                     names: Sequence[str] = BESIDE_MODEL) -> dict[str, dict[str, float]]:
    """``{name: {"pearson", "kendall"}}`` of each baseline against a higher-is-better target
    (Kendall tau-b; ``nan`` when undefined)."""
    from scipy.stats import kendalltau, pearsonr

    y = np.asarray(target, dtype=np.float64)
    scores, _ = score_baselines(refs, cands, names)
    return {n: {"pearson": _statistic(pearsonr, s, y), "kendall": _statistic(kendalltau, s, y)}
            for n, s in scores.items()}


def pair_baselines(refs: Sequence[str], better: Sequence[str], worse: Sequence[str],
                   names: Sequence[str] = BESIDE_MODEL) -> dict[str, float]:
    """``{name: pair accuracy}``: the share of pairs whose better candidate the baseline scores
    strictly higher against the shared reference (a tie is a miss; ``nan`` with no pair)."""
    if not len(refs):
        return {n: math.nan for n in names}
    high, _ = score_baselines(refs, better, names)
    low, _ = score_baselines(refs, worse, names)
    return {n: float(np.mean(high[n] > low[n])) for n in high}


def beside_baselines_table(title: str, model: dict[str, float], baselines: dict[str, dict[str, float]]) -> str:
    """A plain-text table: the model's row first, then each baseline's, in the model's columns."""
    columns = list(model)
    rows = [("this model", model), *((TRIVIAL_LABELS.get(n, n), v) for n, v in baselines.items())]
    width = max(len(r[0]) for r in rows)
    lines = [title, f"{'':{width}}  " + "  ".join(f"{c:>9}" for c in columns)]
    for label, values in rows:
        lines.append(f"{label:{width}}  " + "  ".join(f"{values.get(c, math.nan):9.3f}" for c in columns))
    return "\n".join(lines)
