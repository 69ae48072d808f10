"""How unseen is the unseen-domain test? SYNTHETIC data: the sample profile's sets.

    .venv/bin/python -m benchmarks.quality.unseen_domain [--corpus-sets checkpoints/synthetic] \\
        [--unseen-sets checkpoints/synthetic_unseen]

For the corpus split's sets and the unseen-domain split's (``data/samples/split_unseen.json``: head, spine
and breast reports on the test side only; ``python -m data synth --split ... --out checkpoints/synthetic_unseen``),
per set a learned metric trains on (ER² RadCliQ rows, ClinicalBLEURT rows, RaTE-Eval Task 2 pairs):

- **diff tokens**: the words a (reference, candidate) pair's edit deletes or inserts, as the shallow learner
  sees them (:func:`train.evaluation.baselines.diff_features`: difflib over its tokens, the ``DEL_``/``INS_``
  features, counted with their multiplicity);
- ``unseen_running``: the share of the test rows' diff tokens whose word occurs in no training-side diff
  (train and dev rows: what a model trains or selects on); ``unseen_types``: the same share over distinct words.

And, of the corpus itself, the share of the test side's words (running and distinct) that no train or dev
report holds. Writes ``benchmarks/results/unseen_domain.json``; nothing is trained.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from benchmarks.results_file import write_result

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "benchmarks" / "results" / "unseen_domain.json"


def diff_words(ref: str, cand: str) -> Counter:
    from train.evaluation.baselines import diff_features

    out: Counter = Counter()
    for key, value in diff_features(ref, cand).items():
        if key.startswith(("DEL_", "INS_")):
            out[key[4:]] += int(value)
    return out


def unseen_share(train_pairs, test_pairs) -> dict:
    """The share of the test pairs' diff tokens never seen in a training pair's diff."""
    seen: set = set()
    for ref, cand in train_pairs:
        seen |= set(diff_words(ref, cand))
    test: Counter = Counter()
    for ref, cand in test_pairs:
        test += diff_words(ref, cand)
    if not test:
        raise ValueError("no diff token in the test pairs")
    new = {w: n for w, n in test.items() if w not in seen}
    return {"train_pairs": len(train_pairs), "test_pairs": len(test_pairs), "test_diff_tokens": sum(test.values()),
            "test_diff_types": len(test), "unseen_running": sum(new.values()) / sum(test.values()),
            "unseen_types": len(new) / len(test), "examples": sorted(new, key=lambda w: -new[w])[:12]}


def set_pairs(folder: Path) -> dict[str, tuple[list, list]]:
    """``{set: (training-side pairs, test pairs)}`` of a synthetic folder, read as the trainers read them."""
    from data.rate_eval import read_rate_eval_task2

    out = {}
    for name, path in (("er2_radcliq", folder / "synthetic_er2" / "radcliq_synthetic.jsonl"),
                       ("clinical_bleurt", folder / "synthetic_bleurt" / "clinical_bleurt_synthetic.jsonl")):
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        bad = [r.get("id") for r in rows if r.get("split") not in ("train", "dev", "test")]
        if bad:
            raise ValueError(f"{path}: row(s) {bad[:3]} have no train/dev/test split")
        pairs = {s: [(r["reference"], r["candidate"]) for r in rows if (r["split"] == "test") == (s == "test")]
                 for s in ("train", "test")}
        out[name] = (pairs["train"], pairs["test"])
    root = folder / "synthetic_rate_eval"
    out["task2"] = tuple([(p.reference, p.candidate) for p in read_rate_eval_task2(root, s)] for s in ("train", "test"))
    return out


def corpus_words(split_file: Path | None) -> dict:
    from data.annotation import read_reports
    from data.samples import REPORTS
    from data.split import read_split, split_for
    from train.evaluation.baselines import tokenize

    reports = read_reports(REPORTS)
    split = read_split(split_file) if split_file else split_for(reports, REPORTS)
    words = {"train": Counter(), "test": Counter()}
    for r in reports:
        text = " ".join(s.text for s in r.findings + r.impression)
        words["test" if split.of(r.id) == "test" else "train"].update(w for w in tokenize(text) if w.isalpha())
    new = {w: n for w, n in words["test"].items() if w not in words["train"]}
    return {"test_words": sum(words["test"].values()), "unseen_running": sum(new.values()) / sum(words["test"].values()),
            "unseen_types": len(new) / len(words["test"])}


def measure(corpus_sets: Path, unseen_sets: Path) -> dict:
    from data.split import UNSEEN_SPLIT_FILE

    out = {"what": "SYNTHETIC: share of the test rows' diff tokens (words the edit deletes or inserts) never seen in a "
                   "training-side (train or dev) diff of the same set; and of the test reports' words in no training "
                   "report",
           "command": "python -m benchmarks.quality.unseen_domain"}
    for name, folder, split_file in (("corpus_split", corpus_sets, None), ("unseen_domain_split", unseen_sets,
                                                                             UNSEEN_SPLIT_FILE)):
        gen = json.loads((folder / "generator_synthetic.json").read_text())
        entry = {"sets": f"{folder.relative_to(ROOT) if folder.is_relative_to(ROOT) else folder}, data.synth seed "
                         f"{gen['seed']}, generator fingerprint {gen['fingerprint']}",
                 "corpus_words": corpus_words(split_file)}
        for set_name, (train, test) in set_pairs(folder).items():
            entry[set_name] = unseen_share(train, test)
        out[name] = entry
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus-sets", default=str(ROOT / "checkpoints" / "synthetic"))
    p.add_argument("--unseen-sets", default=str(ROOT / "checkpoints" / "synthetic_unseen"))
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    for folder in (args.corpus_sets, args.unseen_sets):
        if not (Path(folder) / "generator_synthetic.json").is_file():
            p.error(f"{folder}: no synthetic sets (python -m data synth [--split data/samples/split_unseen.json] --out ...)")
    result = measure(Path(args.corpus_sets).resolve(), Path(args.unseen_sets).resolve())
    write_result(Path(args.out), result, indent=1)
    for split in ("corpus_split", "unseen_domain_split"):
        e = result[split]
        print(f"{split}: corpus words unseen {e['corpus_words']['unseen_running']:.1%} running, "
              f"{e['corpus_words']['unseen_types']:.1%} types")
        for s in ("er2_radcliq", "clinical_bleurt", "task2"):
            print(f"  {s:<16} test diff tokens never in a training diff: {e[s]['unseen_running']:.1%} running, "
                  f"{e[s]['unseen_types']:.1%} types ({e[s]['test_diff_tokens']} tokens)")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
