"""``radscore compare``'s statistics and presentation: per system the mean with its bootstrap CI,
per system against the first (the baseline) the paired tests (:mod:`radscore.stats`), the table
and the plot of per-pair differences."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from radscore.atomic import atomic_path
from radscore.stats import bootstrap_ci, summary


def parse_system(spec: str) -> tuple[str, str]:
    name, sep, path = spec.partition("=")
    if not sep or not name or not path:
        raise ValueError(f"--candidates {spec!r}: expected NAME=FILE")
    return name, path


def compare_systems(values: dict[str, list[float]], higher_is_better: bool = True, n_bootstrap: int = 1000,
                    n_randomization: int = 10000, seed: int = 0) -> dict:
    """Per system: summary; per system after the first: the paired tests against the first."""
    from radscore.stats import paired_bootstrap_p, randomization_p

    names = list(values)
    base = names[0]
    out = {"baseline": base, "higher_is_better": higher_is_better,
           "systems": {n: summary(v, seed=seed) for n, v in values.items()}, "comparisons": []}
    for name in names[1:]:
        d = np.asarray(values[name]) - np.asarray(values[base])
        lo, hi = bootstrap_ci(d, n_bootstrap, seed)
        out["comparisons"].append({
            "system": name, "baseline": base, "mean_difference": float(d.mean()), "difference_ci95": [lo, hi],
            "wins": int((d > 0).sum()), "losses": int((d < 0).sum()), "ties": int((d == 0).sum()),
            "p_paired_bootstrap": paired_bootstrap_p(values[name], values[base], n_bootstrap, seed),
            "p_randomization": randomization_p(values[name], values[base], n_randomization, seed)})
    return out


def compare_table(result: dict, metric_label: str) -> str:
    direction = "higher" if result["higher_is_better"] else "lower"
    lines = [f"{metric_label} ({direction} is better); baseline: {result['baseline']}", "",
             "| system | n | mean | 95% CI | Δ vs baseline | Δ 95% CI | p (paired bootstrap) | p (randomisation) |",
             "|---|---|---|---|---|---|---|---|"]
    comps = {c["system"]: c for c in result["comparisons"]}
    for name, s in result["systems"].items():
        row = f"| {name} | {s['n']} | {s['mean']:.4f} | [{s['ci95'][0]:.4f}, {s['ci95'][1]:.4f}] |"
        c = comps.get(name)
        row += (f" {c['mean_difference']:+.4f} | [{c['difference_ci95'][0]:+.4f}, {c['difference_ci95'][1]:+.4f}] |"
                f" {c['p_paired_bootstrap']:.4f} | {c['p_randomization']:.4f} |" if c else " – | – | – | – |")
        lines.append(row)
    return "\n".join(lines) + "\n"


def plot_differences(values: dict[str, list[float]], path: Path, metric_label: str) -> None:
    """Per-pair differences of every system against the baseline, sorted (one line each)."""
    from radscore.optional import require

    matplotlib = require("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(values)
    fig, ax = plt.subplots(figsize=(7, 4))
    for name in names[1:]:
        d = np.sort(np.asarray(values[name]) - np.asarray(values[names[0]]))
        ax.plot(np.arange(1, d.size + 1), d, label=f"{name} − {names[0]} (mean {d.mean():+.4f})")
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xlabel("pairs, sorted by difference")
    ax.set_ylabel(f"{metric_label} difference")
    ax.set_title(f"Per-pair {metric_label} differences against {names[0]}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=120, format=Path(path).suffix.lstrip(".") or "png")
    plt.close(fig)
