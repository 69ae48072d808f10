"""Write the SYNTHETIC sets in the published formats, each folder with a README and a manifest.

Layout under the output folder (every folder name, README and extra column says synthetic):
```
SYNTHETIC_README.md                       how the data were made, every labelling rule
synthetic_rexval/50_samples_gt_and_candidates.csv           ReXVal layout (+ columns synthetic and
                                          candidates_are: "SYNTHETIC edits of gt_report …")
synthetic_rexval/6_valid_raters_per_rater_error_categories.csv
synthetic_rate_eval/Task1_sentence_rate/{gt_report,similar_report}_{train,test}.json, rate_{train,test}.csv
                                          (the JSON files: {"SYNTHETIC": note, "texts": [...]})
synthetic_rate_eval/Task2_paragraph_rate/rate_{train,test}.csv
synthetic_rate_eval/Task3_synthetic/synthetic_triads.csv
synthetic_er2/{radcliq,mrscore}_synthetic.jsonl
synthetic_bleurt/clinical_bleurt_synthetic.jsonl
<each folder>/manifest_synthetic.jsonl    every item with its edits (category, significance,
                                          spans, before/after) and labels
```
The ReXVal file names are the published ones so that :func:`data.rexval.read_rexval` reads the
folder unchanged; they hold as many studies as were asked for, not 50.
"""

from __future__ import annotations

import csv
import json
from dataclasses import asdict, is_dataclass
from pathlib import Path

from data.synth import catalog
from data.synth import edits
from data.synth import mirror
from data.synth import rewrites
from data.synth import labels
from data.rexval import CANDIDATE_TYPES

MANIFEST = "manifest_synthetic.jsonl"
TASK1_MARK = ("SYNTHETIC sentences made by data.synth from the project's sample reports (edits with known "
              "labels), not RaTE-Eval; element i pairs with row i of rate_<split>.csv")
REXVAL_CANDIDATES = "SYNTHETIC edits of gt_report (data.synth), not reports of other studies"
CANDIDATE_KEYS = ("reference_id", "reference", "candidate", "candidate_sentences", "edits")


def _csv(path: Path, header: list[str], rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def _jsonl(path: Path, records) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps(rec, ensure_ascii=False, sort_keys=False) + "\n")


def _json(path: Path, value) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def _manifest(rec: dict, set_name: str, labels: dict, **extra) -> dict:
    return {"synthetic": True, "set": set_name, "id": rec["id"], **extra,
            **{k: rec[k] for k in CANDIDATE_KEYS}, "labels": labels}


def write_rexval(folder: Path, studies: list[dict]) -> None:
    gt_rows, err_rows, manifest = [], [], []
    for number, study in enumerate(studies):
        cands = study["candidates"]
        gt_rows.append([study["study_id"], study["reference"],
                        *[cands[t]["candidate"] for t in CANDIDATE_TYPES], True, REXVAL_CANDIDATES])
        for ctype in CANDIDATE_TYPES:
            cand = cands[ctype]
            totals, sig_totals = [], []
            for rater, counts in enumerate(cand["raters"]):
                for (cat, sig), n in sorted(counts.items(), key=lambda kv: (kv[0][0], not kv[0][1])):
                    err_rows.append([number, ctype, rater, cat, sig, n, True])
                totals.append(sum(counts.values()))
                sig_totals.append(sum(n for (_, s), n in counts.items() if s))
            true = labels.radcliq_subscores(cand["edits"])
            cand["id"] = f"{study['study_id']}:{ctype}"
            manifest.append(_manifest(cand, "rexval", {
                "true_errors": sum(true.values()),
                "true_significant_errors": sum(1 for e in labels.errors_of(cand["edits"]) if e["significant"]),
                "true_per_category": true,
                "rater_totals": totals, "rater_significant_totals": sig_totals,
                "mean_errors": sum(totals) / len(totals),
                "mean_significant_errors": sum(sig_totals) / len(sig_totals),
            }, study_id=study["study_id"], study_number=number, candidate_type=ctype))
    _csv(folder / "50_samples_gt_and_candidates.csv",
         ["study_id", "gt_report", *CANDIDATE_TYPES, "synthetic", "candidates_are"], gt_rows)
    _csv(folder / "6_valid_raters_per_rater_error_categories.csv",
         ["study_number", "candidate_type", "rater_index", "error_category",
          "clinically_significant", "num_errors", "synthetic"], err_rows)
    _jsonl(folder / MANIFEST, manifest)


def write_rate_eval(folder: Path, task1: list[dict], task2: list[dict], task3: list[dict]) -> None:
    manifest = []
    t1 = folder / "Task1_sentence_rate"
    t2 = folder / "Task2_paragraph_rate"
    for split in ("train", "test"):
        rows = [r for r in task1 if r["split"] == split]
        _json(t1 / f"gt_report_{split}.json", {"SYNTHETIC": TASK1_MARK, "texts": [r["reference"] for r in rows]})
        _json(t1 / f"similar_report_{split}.json", {"SYNTHETIC": TASK1_MARK, "texts": [r["candidate"] for r in rows]})
        _csv(t1 / f"rate_{split}.csv", ["index", "id", "group", "errors", "potential_errors", "rate",
                                        "synthetic"],
             [[k, r["id"], r["reference_id"], r["labels"]["errors"], r["labels"]["potential_errors"],
               r["labels"]["rate"], True] for k, r in enumerate(rows)])
        rows2 = [r for r in task2 if r["split"] == split]
        _csv(t2 / f"rate_{split}.csv", ["gt_report", "similar_report", "Score", "id", "group",
                                        "synthetic"],
             [[r["reference"], r["candidate"], r["labels"]["Score"], r["id"], r["reference_id"], True]
              for r in rows2])
    for r in task1:
        manifest.append(_manifest(r, "task1", r["labels"], split=r["split"], sentence=r["sentence"]))
    for r in task2:
        manifest.append(_manifest(r, "task2", r["labels"], split=r["split"]))
    _csv(folder / "Task3_synthetic" / "synthetic_triads.csv",
         ["id", "group", "original", "synonym", "opposite", "synthetic"],
         [[t["id"], t["reference_id"], t["original"], t["synonym"], t["opposite"], True] for t in task3])
    for t in task3:
        manifest.append({"synthetic": True, "set": "task3", **t})
    _jsonl(folder / MANIFEST, manifest)


ER2_KEYS = ("id", "reference_id", "split", "reference", "candidate", "system", "subscores", "total",
            "higher_is_better", "tier")


def write_er2(folder: Path, radcliq: list[dict], mrscore: list[dict]) -> None:
    for name, rows in (("radcliq", radcliq), ("mrscore", mrscore)):
        _jsonl(folder / f"{name}_synthetic.jsonl",
               [{**{k: r[k] for k in ER2_KEYS},
                 **({"item_errors": r["item_errors"]} if "item_errors" in r else {}),
                 "synthetic": True} for r in rows])
    _jsonl(folder / MANIFEST,
           [_manifest(r, r["system"], {"subscores": r["subscores"], "total": r["total"], "split": r["split"],
                                       "tier": r["tier"], **({"item_errors": r["item_errors"]}
                                                             if "item_errors" in r else {})})
            for r in radcliq + mrscore])


BLEURT_KEYS = ("id", "reference_id", "split", "section", "reference", "candidate", "score", "critical",
               "non_critical", "spelling_grammar", "error_score", "max_sentlen")


def write_bleurt(folder: Path, rows: list[dict]) -> None:
    _jsonl(folder / "clinical_bleurt_synthetic.jsonl",
           [{**{k: r[k] for k in BLEURT_KEYS}, "synthetic": True} for r in rows])
    _jsonl(folder / MANIFEST, [_manifest(r, "bleurt", {k: r[k] for k in BLEURT_KEYS[6:]}, split=r["split"])
                               for r in rows])


FOLDER_NOTES = {
    "synthetic_rexval": "SYNTHETIC data in the ReXVal layout (SPEC §2): the published file names and "
    "columns, plus trailing columns `synthetic` and `candidates_are` (\"SYNTHETIC edits of gt_report\") that "
    "readers ignore. The files hold as many studies "
    "as were asked for (not 50). Candidates are edited copies of the reference (not retrieved "
    "reports); the candidate columns keep ReXVal's names. The error file lists every (study, "
    "candidate, rater, category, significance) combination, zeros included. Error counts come from "
    "simulated raters (noise model in ../SYNTHETIC_README.md); the true edits are in "
    "manifest_synthetic.jsonl.",
    "synthetic_rate_eval": "SYNTHETIC data in the RaTE-Eval layout (SPEC §1.10). Task 1: sentences as "
    "{\"SYNTHETIC\": note, \"texts\": [...]} (the marker inside the file; data.rate_eval reads both this and "
    "the published arrays), row i of rate_<split>.csv rates pair i (`rate` = 1 - errors/potential_errors). Task 2: "
    "columns gt_report, similar_report, Score (0-5, steps of 0.25). Task 3: original, synonym rewrite, "
    "opposite rewrite. Extra columns (`id`, `group`, `synthetic`) are ours. Rules in ../SYNTHETIC_README.md.",
    "synthetic_er2": "SYNTHETIC ER²Score training rows, one candidate a line: {reference, candidate, "
    "system, subscores, total}; three candidates (quality tiers) per reference; pairs are formed by "
    "data.ratings.er2_pairs. Rules in ../SYNTHETIC_README.md.",
    "synthetic_bleurt": "SYNTHETIC ClinicalBLEURT section pairs {section, reference, candidate, score} "
    "(one section of a reference, findings or impression, against an edited copy of it) with the error "
    "counts behind the score (SPEC §4). Rules in ../SYNTHETIC_README.md.",
}


def _readme(info: dict, counts: dict) -> str:
    noise = info["noise"]
    noise = asdict(noise) if is_dataclass(noise) else noise
    weights = info.get("bleurt_weights") or labels.BLEURT_WEIGHTS
    lines = [
        "# SYNTHETIC benchmark data: not human ratings",
        "",
        "Made by `python -m data synth` (module `data.synth`) from the project's own hand-written "
        "sample reports by editing them with errors whose category, clinical significance and "
        "span are known. Numbers measured on these files are synthetic checks of the code paths, "
        "never results on ReXVal, RaTE-Eval or GPT-4-scored data.",
        "",
        f"- seed: {info['seed']}; sizes asked: {info['sizes']}",
        f"- corpus: {info['n_reports']} reports from {', '.join(Path(p).name for p in info['corpus'])}",
        f"- items written: {counts}",
        f"- simulated ReXVal raters: {noise}",
        f"- ClinicalBLEURT weights: {weights}; its rows are section pairs (one section of a reference, "
        "findings or impression, against an edited copy of it), as the paper's training data",
        "- a candidate gets fewer errors than drawn when its report offers fewer non-overlapping "
        "edits; every label counts the edits actually made (see the manifests)",
        "",
        "Every folder holds `manifest_synthetic.jsonl`: each item with its reference, candidate, "
        "the candidate's annotated sentences and every edit `{kind, category, significant, why, "
        "section, candidate_span, reference_span, before, after, detail}` (spans are character "
        "offsets into the candidate text and into the reference text, end exclusive; null when "
        "the edit has no text on that side).",
        "",
        "## Edits and the clinical weight model (which errors are clinically significant)",
        "",
        "Clinical weight model" + edits.__doc__.split("Clinical weight model", 1)[1].rstrip(),
        "",
        "The lists of critical findings, incidental findings, tubes and lines and their position "
        "statuses are in `data/lexicons/critical.yaml` of the generator's repository.",
        "",
        "## Meaning-preserving rewrites (no error)",
        "",
        "Generator v3: every report candidate plans a number of edits drawn from "
        f"{list(catalog.PLANNED_EDITS)} independently of its errors (a candidate with more errors "
        "gets exactly its errors); each planned edit's surface operation is drawn "
        f"({dict(catalog.SURFACE_RATES)}) before it is known whether it is an error, and the "
        "edits that are not errors are meaning-preserving edits of that operation. Sentence "
        f"reordering and section headers are drawn apart ({list(catalog.LAYOUT_COUNTS)} per "
        f"candidate); Task 1 sentences get {list(catalog.TASK1_MEANING_COUNTS)} in-sentence rewrites. "
        "So neither the amount of changed text nor the kind of change says how many errors a "
        "candidate holds. Every edit records its `surface` operation. Kinds:",
        "",
        "- " + rewrites.__doc__.split("\n- ", 1)[1].split("\n- ``unnegate``", 1)[0].rstrip(),
        "",
        "Generator v3 (`data/synth/mirror.py` of the generator's repository): "
        + mirror.__doc__.split("\n\n", 1)[1].rstrip(),
        "",
        "## Labels",
        "",
        labels.__doc__.split("Rules (also stated", 1)[1].split("\n", 1)[1].strip(),
        "",
    ]
    return "\n".join(lines)


def write_all(out_dir: Path, sets: dict, info: dict) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    write_rexval(out_dir / "synthetic_rexval", sets["rexval"])
    write_rate_eval(out_dir / "synthetic_rate_eval", sets["task1"], sets["task2"], sets["task3"])
    write_er2(out_dir / "synthetic_er2", sets["radcliq"], sets["mrscore"])
    write_bleurt(out_dir / "synthetic_bleurt", sets["bleurt"])
    for folder, note in FOLDER_NOTES.items():
        (out_dir / folder / "README.md").write_text(f"# {folder}\n\n{note}\n", encoding="utf-8")
    counts = {k: len(v) for k, v in sets.items()}
    counts["rexval"] = len(sets["rexval"]) * len(CANDIDATE_TYPES)
    (out_dir / "SYNTHETIC_README.md").write_text(_readme(info, counts), encoding="utf-8")
