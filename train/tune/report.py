"""What a tune run leaves behind: the comparison table, ``report.json`` and the two figures.

Compared on the train and the test split, each with a grouped bootstrap CI
(:func:`train.evaluation.metaeval.correlation_with_ci`): the tuned matrix, the released ``long`` and
``short`` matrices, a uniform ``W`` (every entry 1, ``p`` = 1: the plain mean best cosine), and the
trivial baselines of :mod:`train.evaluation.baselines` (no model: difflib change hunks, the negation-cue
count difference, unigram F1, sentences not kept word for word), which show what the rating set can be
solved with by text alone, and the shallow learner fitted on the train pairs (what a linear model of
the edit reaches).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from radscore.atomic import atomic_path, write_text_atomic
from radscore.labels import ENTITY_TYPES
from radscore.scoring import AffinityMatrix
from train.evaluation.metaeval import correlation_with_ci
from train.tune.precompute import PairTables

BASELINES = {"long": lambda: AffinityMatrix.builtin("long"), "short": lambda: AffinityMatrix.builtin("short"),
             "uniform": lambda: AffinityMatrix.uniform(1.0, 1.0)}


def compare_matrices(matrices: dict[str, AffinityMatrix], splits: dict[str, tuple[PairTables, np.ndarray, list]],
                     method: str, sign: float, n_resamples: int, confidence: float, seed: int) -> dict:
    """``{matrix name: {split name: CorrelationResult dict}}``; ``splits`` maps a split name to
    ``(tables, ratings, groups)``."""
    out = {}
    for name, matrix in matrices.items():
        out[name] = {}
        for split, (tables, ratings, groups) in splits.items():
            scores = tables.score_matrix(matrix)
            out[name][split] = correlation_with_ci(scores, ratings, groups, method, n_resamples,
                                                   confidence, seed, sign).to_dict()
    return out


def compare_trivial(pairs: list, sides: dict[str, np.ndarray], ratings: np.ndarray, groups: list, method: str,
                    sign: float, n_resamples: int, confidence: float, seed: int) -> dict:
    """``{trivial baseline: {split name: CorrelationResult dict}}`` on the same pairs and splits."""
    from train.evaluation.baselines import TRIVIAL, score_baselines

    out = {}
    for split, idx in sides.items():
        scores, _ = score_baselines([pairs[i].reference for i in idx], [pairs[i].candidate for i in idx], TRIVIAL)
        for name in TRIVIAL:
            out.setdefault(name, {})[split] = correlation_with_ci(
                scores[name], ratings[idx], [groups[i] for i in idx], method, n_resamples, confidence, seed,
                sign).to_dict()
    return out


def compare_shallow(pairs: list, sides: dict[str, np.ndarray], ratings: np.ndarray, groups: list, method: str,
                    sign: float, n_resamples: int, confidence: float, seed: int, chosen: dict | None = None) -> dict:
    """``{SHALLOW_NAME: {split name: CorrelationResult dict}}``: the shallow learner
    (:mod:`train.evaluation.baselines`) fitted on the ``train`` side only, with ``sign * rating`` as
    target (higher is better), then scored on every side (on ``train`` that is its own fitting
    data: an upper bound, not a held-out figure). ``chosen``, when given, receives its version and
    what it chose on a validation part of the train side (its penalty and block weights)."""
    from train.evaluation.baselines import SHALLOW_NAME, shallow_learner

    train = sides["train"]
    if len(train) < 2:  # nothing to fit on (a set without a train side)
        return {}
    model = shallow_learner([pairs[i].reference for i in train], [pairs[i].candidate for i in train],
                            sign * np.asarray(ratings, dtype=np.float64)[train])
    if chosen is not None:
        from train.evaluation.baselines import SHALLOW_VERSION

        chosen.update({"version": SHALLOW_VERSION, **model.chosen()})
    out = {}
    for split, idx in sides.items():
        scores = model.predict([pairs[i].reference for i in idx], [pairs[i].candidate for i in idx])
        out[split] = correlation_with_ci(scores, ratings[idx], [groups[i] for i in idx], method, n_resamples,
                                         confidence, seed, sign).to_dict()
    return {SHALLOW_NAME: out}


def _cell(r: dict) -> str:
    return f"{r['value']:+.3f} [{r['low']:+.3f}, {r['high']:+.3f}]"


def format_table(results: dict, method: str, sign: float, confidence: float, title: str) -> str:
    label = method if sign > 0 else f"{method} with -rating (lower rating is better)"
    splits = list(next(iter(results.values())))
    width = max(9, *(len(n) + 2 for n in results))
    head = f"{'scorer':<{width}}" + "".join(f"{f'{s} ({int(confidence * 100)}% CI)':<28}" for s in splits)
    lines = [title, f"correlation: {label}", head, "-" * len(head)]
    for name, per_split in results.items():
        lines.append(f"{name:<{width}}" + "".join(f"{_cell(per_split[s]):<28}" for s in splits))
    lines.append("RaTEScore rows by matrix (tuned, long, short, uniform); diff_hunks, negation_keywords, "
                 "unigram_f1 and sentences_changed are trivial baselines with no model, shallow_ridge a ridge "
                 "regression on word and character diff n-grams and counts fitted on the train pairs, its "
                 "penalty chosen on a validation part of them (its train column is in-sample) "
                 "(train/evaluation/baselines.py)")
    return "\n".join(lines)


def heatmap(matrix: AffinityMatrix, path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    w, p = matrix.as_array()
    names = [t.lower() for t in ENTITY_TYPES]
    fig, ax = plt.subplots(figsize=(6.4, 5.4), dpi=120)
    image = ax.imshow(w, cmap="viridis", vmin=min(0.0, w.min()), vmax=max(1.0, w.max()))
    for i in range(len(names)):
        for j in range(len(names)):
            light = image.norm(w[i, j]) < 0.6
            ax.text(j, i, f"{w[i, j]:.2f}", ha="center", va="center", fontsize=10,
                    color="white" if light else "black")
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax.set_yticks(range(len(names)), names)
    ax.set_xlabel("type of the best match")
    ax.set_ylabel("type of the scored entity")
    ax.set_title(f"{title}\npenalty p (neg_weight) = {p:.3f}", fontsize=10)
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="W")
    fig.tight_layout()
    with atomic_path(path) as tmp:  # the format from the final name: the temporary one ends in .tmp
        fig.savefig(tmp, format=Path(path).suffix.lstrip(".") or None)
    plt.close(fig)


def history_plot(numbers: list[int], values: list[float], path: Path, title: str, ylabel: str,
                 baselines: dict[str, float] | None = None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = np.argsort(numbers)
    x, y = np.asarray(numbers)[order], np.asarray(values, dtype=float)[order]
    fig, ax = plt.subplots(figsize=(7.0, 4.2), dpi=120)
    ax.scatter(x, y, s=6, color="0.65", label="trial", zorder=1)
    ax.step(x, np.maximum.accumulate(y), where="post", color="tab:blue", lw=2, label="best so far", zorder=3)
    styles = ["--", ":", "-."]
    for k, (name, value) in enumerate((baselines or {}).items()):
        if np.isfinite(value):
            ax.axhline(value, ls=styles[k % 3], lw=1.2, color=f"C{k + 1}", label=f"{name} matrix", zorder=2)
    if len(y):  # every baseline in view; the worst 5% of trials may fall below
        marks = [v for v in (baselines or {}).values() if np.isfinite(v)]
        lo, top = min([np.percentile(y, 5), *marks]), max([y.max(), *marks])
        ax.set_ylim(lo - 0.05 * (top - lo + 1e-9), top + 0.08 * (top - lo + 1e-9))
    ax.set_xlabel("trial")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    with atomic_path(path) as tmp:  # the format from the final name: the temporary one ends in .tmp
        fig.savefig(tmp, format=Path(path).suffix.lstrip(".") or None)
    plt.close(fig)


def write_report(path: Path, report: dict) -> None:
    """``report`` as JSON, with an environment record (``environment`` of ``radscore.environment``) when the
    caller gave none (the tune CLI gives one with the search's precision and sampler seed)."""
    if report.get("environment") is None:
        from radscore.environment import environment

        report["environment"] = environment()
    write_text_atomic(path, json.dumps(report, indent=1, default=_jsonable) + "\n", encoding="utf-8")


def _jsonable(value):
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
