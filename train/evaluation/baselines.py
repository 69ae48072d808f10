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

    scores, _ = score_baselines(refs, cands, names)
    return {n: rating_statistics(s, target) for n, s in scores.items()}


def rating_statistics(scores: Sequence[float], target: Sequence[float]) -> dict[str, float]:
    """``{"pearson", "kendall"}`` of per-row scores against a higher-is-better target (Kendall
    tau-b; ``nan`` when undefined): what :func:`rating_baselines` reports for each baseline."""
    from scipy.stats import kendalltau, pearsonr

    s, y = np.asarray(scores, dtype=np.float64), np.asarray(target, dtype=np.float64)
    return {"pearson": _statistic(pearsonr, s, y), "kendall": _statistic(kendalltau, s, y)}


def pair_accuracy(better_scores: Sequence[float], worse_scores: Sequence[float]) -> float:
    """The share of pairs whose better candidate scores strictly higher (a tie is a miss; ``nan``
    with no pair): what :func:`pair_baselines` reports for each baseline."""
    high, low = np.asarray(better_scores, dtype=np.float64), np.asarray(worse_scores, dtype=np.float64)
    return float(np.mean(high > low)) if len(high) else math.nan


def pair_baselines(refs: Sequence[str], better: Sequence[str], worse: Sequence[str],
                   names: Sequence[str] = BESIDE_MODEL) -> dict[str, float]:
    """``{name: pair accuracy}``: the share of pairs whose better candidate the baseline scores
    strictly higher against the shared reference (a tie is a miss; ``nan`` with no pair)."""
    if not len(refs):
        return {n: math.nan for n in names}
    high, _ = score_baselines(refs, better, names)
    low, _ = score_baselines(refs, worse, names)
    return {n: pair_accuracy(high[n], low[n]) for n in high}


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


# --- a shallow learned baseline: a linear model of the edit, fitted on the train rows of the same set ---
#: its label in the tables beside a trained model
SHALLOW_LABEL = "shallow learner (ridge on word and character diff n-grams and counts, fitted on train rows)"
SHALLOW_NAME = "shallow_ridge"
#: which learner produced a ``shallow_ridge`` figure (recorded beside the figures it produced).
#: v1: ridge (alpha 1.0, fixed) on word diff tokens only. v2: word diff tokens, character
#: 3-5-grams of the deleted and inserted text and :data:`COUNT_FEATURES`; penalty and block weights
#: chosen on a grouped validation part of the train rows (a coordinate search), then refitted on all
#: train rows.
SHALLOW_VERSION = "v2"
#: the penalties tried on validation (ridge ``alpha``; the pair model's logistic ``C = 1 / alpha``)
SHALLOW_ALPHAS = (1.0, 3.0, 10.0, 30.0, 100.0, 300.0)
#: the weights tried for the character n-gram block and the count block (the word block's weight is 1;
#: a weight of 0 drops the block)
SHALLOW_BLOCK_WEIGHTS = {"char_weight": (0.0, 0.5, 1.0, 2.0), "count_weight": (0.0, 0.5, 1.0, 2.0)}
#: the most frequent character n-grams kept per side (deleted text, inserted text)
SHALLOW_CHAR_NGRAMS = 20000
#: the share of train rows (whole references) held out to choose the penalty and the block weights
SHALLOW_VALIDATION_SHARE = 0.2
#: the seed of that grouped hold-out
SHALLOW_SEED = 0
#: the v1 learner's fixed penalty (kept for ``ShallowLearner(alpha=...)``: no validation when given)
SHALLOW_ALPHA = 1.0
SHALLOW_C = 1.0 / SHALLOW_ALPHA
#: the cheap, untrained per-pair counts of the count block, in column order. The trivial baselines'
#: values and BLEU-4, then sentence-alignment counts (each sentence of one text aligned with the
#: sentence of the other that has the highest unigram F1; "kept" = word for word, "unmatched" = F1
#: below 0.5, "altered" = F1 from 0.5 to below 1) and diff counts; the negation cues are
#: :data:`NEGATION_CUES`. (ROUGE-L is left out: it costs more than all the others together.)
COUNT_FEATURES = ("bleu4", "unigram_f1", "diff_hunks", "negation_keywords", "sentences_changed",
                  "ref_sentences", "cand_sentences", "ref_sentences_kept", "ref_share_kept", "ref_sentences_unmatched",
                  "cand_sentences_unmatched", "ref_sentences_altered", "mean_alignment_f1", "min_alignment_f1",
                  "altered_with_negation_change", "negation_cues_deleted", "negation_cues_inserted",
                  "number_tokens_changed", "tokens_deleted", "tokens_inserted", "length_difference",
                  "abs_length_difference")


def _opcodes(rt: list[str], ct: list[str]):
    from difflib import SequenceMatcher

    return SequenceMatcher(None, rt, ct, autojunk=False).get_opcodes()


def diff_features(ref: str, cand: str) -> dict[str, float]:
    """Features of one (reference, candidate) pair from difflib's token opcodes
    (``SequenceMatcher(autojunk=False)`` over :func:`tokenize`): ``DEL_<word>`` counts the reference
    tokens a ``delete`` or ``replace`` hunk removes, ``INS_<word>`` the candidate tokens an
    ``insert`` or ``replace`` hunk adds; plus ``log1p`` counts of the tokens deleted, inserted and
    replaced (reference side of ``replace`` hunks) and of the hunks."""
    from collections import Counter

    rt, ct = tokenize(ref), tokenize(cand)
    feats: Counter = Counter()
    deleted = inserted = replaced = hunks = 0
    for op, i1, i2, j1, j2 in _opcodes(rt, ct):
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


def diff_texts(ref: str, cand: str) -> tuple[str, str]:
    """(deleted text, inserted text): the reference tokens the diff removes and the candidate tokens
    it adds, joined by spaces, hunks separated by `` | `` (the character n-grams are taken of these)."""
    rt, ct = tokenize(ref), tokenize(cand)
    deleted, inserted = [], []
    for op, i1, i2, j1, j2 in _opcodes(rt, ct):
        if op != "equal":
            if i2 > i1:
                deleted.append(" ".join(rt[i1:i2]))
            if j2 > j1:
                inserted.append(" ".join(ct[j1:j2]))
    return " | ".join(deleted), " | ".join(inserted)


def _f1(a, b, la: int, lb: int) -> float:
    """Unigram F1 of two token Counters of sizes ``la`` and ``lb``."""
    return 1.0 if la + lb == 0 else 2.0 * sum((a & b).values()) / (la + lb)


def count_features(refs: Sequence[str], cands: Sequence[str]) -> np.ndarray:
    """The (rows, len(COUNT_FEATURES)) matrix of :data:`COUNT_FEATURES`: no model, no training."""
    from collections import Counter

    _check(refs, cands)
    if not len(refs):
        return np.zeros((0, len(COUNT_FEATURES)))
    n_first = 5
    cols = {"bleu4": bleu(refs, cands, 4), "unigram_f1": unigram_f1(refs, cands), "diff_hunks": diff_hunks(refs, cands),
            "negation_keywords": negation_keywords(refs, cands), "sentences_changed": sentences_changed(refs, cands)}
    rest = []
    for r, c in zip(refs, cands):
        rs, cs = [s.split() for s in _sentences(r)], [s.split() for s in _sentences(c)]
        rc, cc = [Counter(s) for s in rs], [Counter(t) for t in cs]
        f = np.array([[_f1(a, b, len(s), len(t)) for b, t in zip(cc, cs)] for a, s in zip(rc, rs)]).reshape(len(rs), len(cs))
        best_r = f.max(axis=1) if f.size else np.zeros(len(rs))
        best_c = f.max(axis=0) if f.size else np.zeros(len(cs))
        kept = sum(s in cs for s in rs)
        altered = neg_altered = 0
        for k, s in enumerate(rs):
            if 0.5 <= best_r[k] < 1.0:
                altered += 1
                t = cs[int(f[k].argmax())]
                neg_altered += sum(w in NEGATION_CUES for w in s) != sum(w in NEGATION_CUES for w in t)
        rt, ct = tokenize(r), tokenize(c)
        dele, ins = [], []
        for op, i1, i2, j1, j2 in _opcodes(rt, ct):
            if op != "equal":
                dele += rt[i1:i2]
                ins += ct[j1:j2]
        rest.append([len(rs), len(cs), kept, kept / len(rs) if rs else 1.0, int(np.sum(best_r < 0.5)),
                     int(np.sum(best_c < 0.5)), altered, float(np.mean(best_r)) if rs else 1.0,
                     float(best_r.min()) if rs else 1.0, neg_altered, sum(w in NEGATION_CUES for w in dele),
                     sum(w in NEGATION_CUES for w in ins), sum(any(ch.isdigit() for ch in w) for w in dele + ins),
                     len(dele), len(ins), len(ct) - len(rt), abs(len(ct) - len(rt))])
    first = np.column_stack([cols[n] for n in COUNT_FEATURES[:n_first]])
    return np.hstack([first, np.asarray(rest, dtype=np.float64)])


def _group_holdout(groups: Sequence, share: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(fit, validation) row indices: whole groups (one reference's rows) on one side."""
    from sklearn.model_selection import GroupShuffleSplit

    fit, val = next(GroupShuffleSplit(n_splits=1, test_size=share, random_state=seed).split(
        np.zeros(len(groups)), groups=list(groups)))
    return fit, val


class ShallowLearner:
    """A linear model of the edit (``SHALLOW_VERSION`` v2): features are three blocks, each fitted on
    the rows given to :meth:`fit` only: word diff tokens (:func:`diff_features`), character 3-5-grams
    (``TfidfVectorizer(analyzer="char_wb")``, sublinear tf, n-grams of at least two rows, the
    :data:`SHALLOW_CHAR_NGRAMS` most frequent) of the deleted and of the inserted text
    (:func:`diff_texts`), and the standardised :data:`COUNT_FEATURES`. ``kind="ridge"`` regresses a
    rating (``sklearn.linear_model.Ridge``); ``kind="pair"`` is a logistic regression (liblinear, no
    intercept, ``C = 1 / alpha``) on the difference of the two candidates' features, fitted on both
    orders of every training pair, so that its weights score one candidate and the better one should
    score higher.

    With ``alpha=None`` (the default) the penalty (:data:`SHALLOW_ALPHAS`) and the weights of the
    character and count blocks (:data:`SHALLOW_BLOCK_WEIGHTS`) are chosen on a validation part of
    the given rows (:data:`SHALLOW_VALIDATION_SHARE` of them, whole references, seed
    :data:`SHALLOW_SEED`; the ridge by Kendall tau-b on the held-out rows, the pair model by held-out
    pair accuracy) by a coordinate search: alpha over its grid with both weights 1 (each weight's
    first value when 1 is not in its grid), then the
    character weight, then the count weight, then alpha again, each step moving only to a strictly
    better validation score. Then it is refitted on all the given rows with the chosen values, which
    :attr:`selection` records. A given ``alpha`` skips the search and uses weights 1. Only what
    :meth:`fit` is given is ever used: pass it the train rows."""

    def __init__(self, kind: str = "ridge", alpha: float | None = None):
        if kind not in ("ridge", "pair"):
            raise ValueError(f"kind={kind!r}; expected ridge or pair")
        if alpha is not None and not alpha > 0:
            raise ValueError(f"alpha must be > 0, got {alpha}")
        self.kind, self.alpha = kind, None if alpha is None else float(alpha)
        self.model = self.words = self.chars = self.scaler = None
        self.weights = {"char_weight": 1.0, "count_weight": 1.0}
        self.selection: dict = {}

    # --- features -------------------------------------------------------------------------------------
    @staticmethod
    def _raw(refs, cands):
        """The features of each distinct (reference, candidate) pair, computed once, and the index of
        each row's pair: (word dicts, (deleted, inserted) texts, count matrix, row -> pair)."""
        _check(refs, cands)
        keys = list(zip(refs, cands))
        distinct = list(dict.fromkeys(keys))
        where = {k: i for i, k in enumerate(distinct)}
        words = [diff_features(r, c) for r, c in distinct]
        texts = [diff_texts(r, c) for r, c in distinct]
        counts = count_features([k[0] for k in distinct], [k[1] for k in distinct])
        return words, texts, counts, np.array([where[k] for k in keys], dtype=np.intp)

    def _fit_features(self, raw) -> None:
        from sklearn.feature_extraction import DictVectorizer
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.preprocessing import StandardScaler

        words, texts, counts, _ = raw
        self.words = DictVectorizer(sparse=True).fit(words)
        self.chars = []
        for side in (0, 1):  # deleted, inserted
            vec = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), min_df=min(2, len(texts)),
                                  sublinear_tf=True, max_features=SHALLOW_CHAR_NGRAMS, dtype=np.float64)
            try:
                vec.fit([t[side] for t in texts])
            except ValueError:  # no n-gram at all on this side (e.g. no row deletes anything)
                vec = None
            self.chars.append(vec)
        self.scaler = StandardScaler().fit(counts)

    def _blocks(self, raw) -> tuple:
        """(words, chars, counts) sparse blocks of the rows, unweighted."""
        from scipy.sparse import csr_matrix, hstack

        words, texts, counts, rows = raw
        w = self.words.transform(words)
        chars = hstack([vec.transform([t[side] for t in texts]) if vec is not None else csr_matrix((len(texts), 0))
                        for side, vec in enumerate(self.chars)]).tocsr()
        n = csr_matrix(self.scaler.transform(counts))
        return tuple(block.tocsr()[rows] for block in (w, chars, n))

    @staticmethod
    def _stack(blocks, weights: dict):
        from scipy.sparse import hstack

        words, chars, counts = blocks
        return hstack([words, weights["char_weight"] * chars, weights["count_weight"] * counts]).tocsr()

    # --- the linear models ----------------------------------------------------------------------------
    def _fit_model(self, x, y, alpha: float):
        from sklearn.linear_model import LogisticRegression, Ridge

        if self.kind == "ridge":
            return Ridge(alpha=alpha).fit(x, y)
        return LogisticRegression(C=1.0 / alpha, fit_intercept=False, solver="liblinear").fit(x, y)

    def _score(self, model, x) -> np.ndarray:
        if self.kind == "ridge":
            return np.asarray(model.predict(x), dtype=np.float64)
        return np.asarray(x @ model.coef_.ravel(), dtype=np.float64)

    def _validation_score(self, blocks, y, fit, val, alpha: float, weights: dict) -> float:
        from scipy.stats import kendalltau

        x = self._stack(blocks, weights)
        if self.kind == "ridge":
            s = self._score(self._fit_model(x[fit], y[fit], alpha), x[val])
            value = float(kendalltau(s, y[val]).statistic) if np.ptp(s) > 0 and np.ptp(y[val]) > 0 else -1.0
        else:  # rows are differences (better - worse): fitted on both orders
            xf = _vstack_pm(x[fit])
            value = float(np.mean(self._score(self._fit_model(xf, np.r_[np.ones(len(fit)), np.zeros(len(fit))], alpha),
                                              x[val]) > 0))
        return -1.0 if math.isnan(value) else value

    def _select(self, blocks, y, groups) -> None:
        """Choose alpha and the block weights on a grouped validation part of the rows (or pairs)."""
        n = len(groups)
        fit = val = None
        if len(set(groups)) >= 5:
            fit, val = _group_holdout(groups, SHALLOW_VALIDATION_SHARE, SHALLOW_SEED)
        usable = fit is not None and len(fit) >= 2 and len(val) >= 2 and (
            self.kind == "pair" or np.ptp(y[fit]) > 0)
        if not usable:
            self.alpha = SHALLOW_ALPHA
            self.selection = {"alpha": self.alpha, **self.weights, "criterion": "none: too few rows to hold any out",
                              "fit_rows": n, "validation_rows": 0}
            return
        tried: dict = {}

        def score(alpha, weights):
            key = (alpha, weights["char_weight"], weights["count_weight"])
            if key not in tried:
                tried[key] = self._validation_score(blocks, y, fit, val, alpha, weights)
            return tried[key]

        weights = {k: 1.0 if 1.0 in grid else grid[0] for k, grid in SHALLOW_BLOCK_WEIGHTS.items()}
        alpha = SHALLOW_ALPHAS[0]
        best = score(alpha, weights)
        for step in ("alpha", "char_weight", "count_weight", "alpha"):
            for value in (SHALLOW_ALPHAS if step == "alpha" else SHALLOW_BLOCK_WEIGHTS[step]):
                a, w = (value, weights) if step == "alpha" else (alpha, {**weights, step: value})
                got = score(a, w)
                if got > best:
                    best, alpha, weights = got, a, w
        self.alpha, self.weights = alpha, dict(weights)
        self.selection = {"alpha": alpha, **weights,
                          "criterion": "validation Kendall tau-b" if self.kind == "ridge" else "validation pair accuracy",
                          "validation_score": best, "fit_rows": int(len(fit)), "validation_rows": int(len(val)),
                          "settings_tried": len(tried)}

    def fit(self, refs: Sequence[str], cands: Sequence[str], targets: Sequence[float] | None = None,
            worse: Sequence[str] | None = None) -> "ShallowLearner":
        """``ridge``: ``fit(refs, cands, targets)``; ``pair``: ``fit(refs, better, worse=worse)``."""
        choose = self.alpha is None
        if self.kind == "ridge":
            _check(refs, cands)
            y = np.asarray(targets, dtype=np.float64)
            if len(y) != len(refs) or len(y) < 2:
                raise ValueError(f"{len(y)} targets for {len(refs)} rows: need one per row and two rows at least")
            raw = self._raw(refs, cands)
            self._fit_features(raw)
            blocks = self._blocks(raw)
            if choose:
                self._select(blocks, y, list(refs))
            else:
                self.selection = {"alpha": self.alpha, **self.weights, "criterion": "given"}
            self.model = self._fit_model(self._stack(blocks, self.weights), y, self.alpha)
            return self
        if worse is None or len(worse) != len(refs) or not len(refs):
            raise ValueError("the pair learner needs refs, better and worse candidates of equal, non-zero length")
        _check(refs, cands)
        _check(refs, worse)
        raw = self._raw(list(refs) * 2, list(cands) + list(worse))
        self._fit_features(raw)
        both = self._blocks(raw)
        n = len(refs)
        diff = tuple(block[:n] - block[n:] for block in both)
        if choose:
            self._select(diff, None, list(refs))
        else:
            self.selection = {"alpha": self.alpha, **self.weights, "criterion": "given"}
        d = self._stack(diff, self.weights)
        self.model = self._fit_model(_vstack_pm(d), np.r_[np.ones(d.shape[0]), np.zeros(d.shape[0])], self.alpha)
        return self

    def predict(self, refs: Sequence[str], cands: Sequence[str]) -> np.ndarray:
        """A higher-is-better score per (reference, candidate) pair (for ``pair``: its linear score)."""
        if self.model is None:
            raise RuntimeError("fit the shallow learner first")
        if not len(refs):
            return np.zeros(0)
        return self._score(self.model, self._stack(self._blocks(self._raw(refs, cands)), self.weights))

    def chosen(self) -> dict[str, float]:
        """The values chosen on validation, as numbers (logged beside the learner's figures):
        ``alpha``, ``char_weight``, ``count_weight``."""
        return {"alpha": float(self.alpha), **{k: float(v) for k, v in self.weights.items()}}


def _vstack_pm(d):
    from scipy.sparse import vstack

    return vstack([d, -d]).tocsr()


def shallow_learner(refs: Sequence[str], cands: Sequence[str], targets: Sequence[float]) -> ShallowLearner:
    """The ridge learner of ``targets`` on (refs, cands), its penalty and block weights chosen on a
    validation part of these rows: pass the train rows only."""
    return ShallowLearner("ridge").fit(refs, cands, targets)


def shallow_rating_baseline(train_refs, train_cands, train_targets, eval_refs, eval_cands, eval_targets,
                            name: str = SHALLOW_NAME) -> dict[str, dict[str, float]]:
    """``{name: {"pearson", "kendall", "alpha", "char_weight", "count_weight"}}``: the ridge learner
    fitted on the train rows (its values chosen on a validation part of them, recorded beside the
    figures), scored on the evaluated rows against their higher-is-better targets (the eval targets
    are used only for the statistics)."""
    s, chosen = shallow_rating_scores(train_refs, train_cands, train_targets, eval_refs, eval_cands)
    return {name: {**rating_statistics(s, eval_targets), **chosen}}


def shallow_rating_scores(train_refs, train_cands, train_targets, eval_refs,
                          eval_cands) -> tuple[np.ndarray, dict[str, float]]:
    """``(score per evaluated row, values chosen on validation)`` of the ridge learner fitted on the
    train rows: the per-row scores behind :func:`shallow_rating_baseline`'s figures."""
    model = shallow_learner(train_refs, train_cands, train_targets)
    return model.predict(eval_refs, eval_cands), model.chosen()


def shallow_pair_scores(train_refs, train_better, train_worse, eval_refs,
                        eval_cands) -> tuple[np.ndarray, dict[str, float]]:
    """``(linear score per evaluated (reference, candidate) row, values chosen on validation)`` of the
    pair learner fitted on the train pairs: a pair is right when its better row scores strictly
    higher (:func:`pair_accuracy`), as :func:`shallow_pair_baseline` counts."""
    model = ShallowLearner("pair").fit(train_refs, train_better, worse=train_worse)
    return model.predict(eval_refs, eval_cands), model.chosen()


def shallow_pair_baseline(train_refs, train_better, train_worse, eval_refs, eval_better, eval_worse,
                          name: str = SHALLOW_NAME, chosen: dict | None = None) -> dict[str, float]:
    """``{name: pair accuracy}`` as :func:`pair_baselines`: the pair learner fitted on the train pairs
    (better, worse), the share of evaluated pairs whose better candidate it scores strictly higher.
    Pass a dict as ``chosen`` to receive the values the learner chose on validation."""
    if not len(eval_refs):
        return {name: math.nan}
    model = ShallowLearner("pair").fit(train_refs, train_better, worse=train_worse)
    if chosen is not None:
        chosen.update(model.chosen())
    return {name: float(np.mean(model.predict(eval_refs, eval_better) > model.predict(eval_refs, eval_worse)))}
