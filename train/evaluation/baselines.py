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
``sentences_changed``   minus the number of sentences of either text that the other does not hold
                        word for word (lower-cased, section headers dropped; split after ``.``,
                        ``?``, ``!``): a reader who counts rewritten sentences
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

TRIVIAL = ("diff_hunks", "negation_keywords", "unigram_f1", "sentences_changed")
BASELINES = ("bleu4", "bleu2", "rougeL", "bertscore", "meteor", *TRIVIAL)
TRIVIAL_LABELS = {"diff_hunks": "trivial: difflib change hunks (-count)",
                  "negation_keywords": "trivial: negation-cue count difference (-|Δ|)",
                  "unigram_f1": "trivial: unigram F1",
                  "sentences_changed": "trivial: sentences not kept word for word (-count)"}
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


_SENTENCE = re.compile(r"[^.?!]+[.?!]?")
_SECTION_HEADER = re.compile(r"\b(?:findings|impression)\s*:\s*")


def _sentences(text: str) -> list[str]:
    text = _SECTION_HEADER.sub(" ", text.lower())
    return [" ".join(s.split()).rstrip(".?! ") for s in _SENTENCE.findall(text) if s.strip(" .?!")]


def sentences_changed(refs: Sequence[str], cands: Sequence[str]) -> np.ndarray:
    """Minus the number of sentences of either text that the other does not hold word for word."""
    _check(refs, cands)
    out = np.zeros(len(refs))
    for k, (r, c) in enumerate(zip(refs, cands)):
        rs, cs = _sentences(r), _sentences(c)
        out[k] = 0.0 - sum(s not in set(cs) for s in rs) - sum(s not in set(rs) for s in cs)
    return out


def _fn(name: str) -> Callable[..., np.ndarray]:
    table = {"bleu4": lambda r, c, **kw: bleu(r, c, 4), "bleu2": lambda r, c, **kw: bleu(r, c, 2),
             "rougeL": lambda r, c, **kw: rouge_l(r, c), "bertscore": bertscore,
             "meteor": lambda r, c, **kw: meteor(r, c), "diff_hunks": lambda r, c, **kw: diff_hunks(r, c),
             "negation_keywords": lambda r, c, **kw: negation_keywords(r, c),
             "unigram_f1": lambda r, c, **kw: unigram_f1(r, c),
             "sentences_changed": lambda r, c, **kw: sentences_changed(r, c)}
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
    labels = {**TRIVIAL_LABELS, SHALLOW_NAME: SHALLOW_LABEL}  # the shallow learner is learned, not trivial
    rows = [("this model", model), *((labels.get(n, n), v) for n, v in baselines.items())]
    width = max(len(r[0]) for r in rows)
    lines = [title, f"{'':{width}}  " + "  ".join(f"{c:>9}" for c in columns)]
    for label, values in rows:
        lines.append(f"{label:{width}}  " + "  ".join(f"{values.get(c, math.nan):9.3f}" for c in columns))
    return "\n".join(lines)


# --- a shallow learned baseline: ridge on diff tokens, fitted on the train rows of the same set --------
#: its label in the tables beside a trained model
SHALLOW_LABEL = "shallow learner (ridge on diff tokens, fitted on train rows)"
SHALLOW_NAME = "shallow_ridge"
#: the ridge penalty, fixed (our choice; not tuned, so no dev or test row can influence it)
SHALLOW_ALPHA = 1.0
#: the logistic regression's inverse penalty for pair tasks (our choice, fixed: ``C = 1 / alpha``)
SHALLOW_C = 1.0 / SHALLOW_ALPHA


def diff_features(ref: str, cand: str) -> dict[str, float]:
    """Features of one (reference, candidate) pair from difflib's token opcodes
    (``SequenceMatcher(autojunk=False)`` over :func:`tokenize`): ``DEL_<word>`` counts the reference
    tokens a ``delete`` or ``replace`` hunk removes, ``INS_<word>`` the candidate tokens an
    ``insert`` or ``replace`` hunk adds; plus ``log1p`` counts of the tokens deleted, inserted and
    replaced (reference side of ``replace`` hunks) and of the hunks."""
    from collections import Counter
    from difflib import SequenceMatcher

    rt, ct = tokenize(ref), tokenize(cand)
    feats: Counter = Counter()
    deleted = inserted = replaced = hunks = 0
    for op, i1, i2, j1, j2 in SequenceMatcher(None, rt, ct, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        hunks += 1
        for w in rt[i1:i2]:
            feats[f"DEL_{w}"] += 1
        for w in ct[j1:j2]:
            feats[f"INS_{w}"] += 1
        if op == "delete":
            deleted += i2 - i1
        elif op == "insert":
            inserted += j2 - j1
        else:
            replaced += i2 - i1
    out = {k: float(v) for k, v in feats.items()}
    out.update({"#log_deleted": math.log1p(deleted), "#log_inserted": math.log1p(inserted),
                "#log_replaced": math.log1p(replaced), "#log_hunks": math.log1p(hunks)})
    return out


class ShallowLearner:
    """A linear model on :func:`diff_features`: ``kind="ridge"`` regresses a rating
    (``sklearn.linear_model.Ridge(alpha=SHALLOW_ALPHA)``); ``kind="pair"`` is a logistic regression
    (no intercept, ``C=SHALLOW_C``) on the difference of the two candidates' features, fitted on
    both orders of every training pair, so its weights score one candidate and the better one
    should score higher. The vocabulary is the training rows' (a word never seen in training has
    no feature). Only what :meth:`fit` is given is ever used: pass it the train rows alone."""

    def __init__(self, kind: str = "ridge", alpha: float = SHALLOW_ALPHA):
        if kind not in ("ridge", "pair"):
            raise ValueError(f"kind={kind!r}; expected ridge or pair")
        self.kind, self.alpha = kind, float(alpha)
        self.vectorizer = self.model = None

    def _x(self, refs, cands):
        _check(refs, cands)
        return self.vectorizer.transform([diff_features(r, c) for r, c in zip(refs, cands)])

    def fit(self, refs: Sequence[str], cands: Sequence[str], targets: Sequence[float] | None = None,
            worse: Sequence[str] | None = None) -> "ShallowLearner":
        """``ridge``: ``fit(refs, cands, targets)``; ``pair``: ``fit(refs, better, worse=worse)``."""
        from sklearn.feature_extraction import DictVectorizer
        from sklearn.linear_model import LogisticRegression, Ridge

        self.vectorizer = DictVectorizer(sparse=True)
        if self.kind == "ridge":
            _check(refs, cands)
            y = np.asarray(targets, dtype=np.float64)
            if len(y) != len(refs) or len(y) < 2:
                raise ValueError(f"{len(y)} targets for {len(refs)} rows: need one per row and two rows at least")
            x = self.vectorizer.fit_transform([diff_features(r, c) for r, c in zip(refs, cands)])
            self.model = Ridge(alpha=self.alpha).fit(x, y)
            return self
        if worse is None or len(worse) != len(refs) or not len(refs):
            raise ValueError("the pair learner needs refs, better and worse candidates of equal, non-zero length")
        _check(refs, cands)
        _check(refs, worse)
        self.vectorizer.fit([diff_features(r, c) for r, c in zip(list(refs) * 2, list(cands) + list(worse))])
        d = self._x(refs, cands) - self._x(refs, worse)
        from scipy.sparse import vstack

        x = vstack([d, -d])
        y = np.r_[np.ones(d.shape[0]), np.zeros(d.shape[0])]
        self.model = LogisticRegression(C=1.0 / self.alpha, fit_intercept=False, max_iter=1000).fit(x, y)
        return self

    def predict(self, refs: Sequence[str], cands: Sequence[str]) -> np.ndarray:
        """A higher-is-better score per (reference, candidate) pair (for ``pair``: its linear score)."""
        if self.model is None:
            raise RuntimeError("fit the shallow learner first")
        if not len(refs):
            return np.zeros(0)
        x = self._x(refs, cands)
        if self.kind == "ridge":
            return np.asarray(self.model.predict(x), dtype=np.float64)
        return np.asarray(x @ self.model.coef_.ravel(), dtype=np.float64)


def shallow_learner(refs: Sequence[str], cands: Sequence[str], targets: Sequence[float]) -> ShallowLearner:
    """A ridge regression of ``targets`` on the diff features of (refs, cands): train rows only."""
    return ShallowLearner("ridge").fit(refs, cands, targets)


def shallow_rating_baseline(train_refs, train_cands, train_targets, eval_refs, eval_cands, eval_targets,
                            name: str = SHALLOW_NAME) -> dict[str, dict[str, float]]:
    """``{name: {"pearson", "kendall"}}`` as :func:`rating_baselines`: the ridge learner fitted on the
    train rows, scored on the evaluated rows against their higher-is-better targets (the eval
    targets are used only for the statistics)."""
    from scipy.stats import kendalltau, pearsonr

    model = shallow_learner(train_refs, train_cands, train_targets)
    s, y = model.predict(eval_refs, eval_cands), np.asarray(eval_targets, dtype=np.float64)
    return {name: {"pearson": _statistic(pearsonr, s, y), "kendall": _statistic(kendalltau, s, y)}}


def shallow_pair_baseline(train_refs, train_better, train_worse, eval_refs, eval_better, eval_worse,
                          name: str = SHALLOW_NAME) -> dict[str, float]:
    """``{name: pair accuracy}`` as :func:`pair_baselines`: the pair learner fitted on the train pairs
    (better, worse), the share of evaluated pairs whose better candidate it scores strictly higher."""
    if not len(eval_refs):
        return {name: math.nan}
    model = ShallowLearner("pair").fit(train_refs, train_better, worse=train_worse)
    return {name: float(np.mean(model.predict(eval_refs, eval_better) > model.predict(eval_refs, eval_worse)))}
