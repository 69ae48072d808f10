"""(module) The scoring jobs of the kill test (``python -m benchmarks.kill_test``): ``radscore score
--out`` to JSON lines and to CSV, ``radscore compare --out-dir``, and ``atomic-writers``, a child
(``python -m benchmarks.scoring.kill_jobs atomic-writers FOLDER``) that rewrites an export manifest,
an affinity matrix and a results JSON with radscore's writers.

Inputs: seeded SYNTHETIC report-like texts (:mod:`benchmarks.scoring.report_texts`) as JSON lines
(the texts hold line breaks); models: a tiny random NER export and encoder unless given.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from benchmarks.kill_test import Job

PAYLOAD = 60_000  # numbers per file of the atomic-writers child: about 0.5 MB each
ITERATIONS = 40


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pairs", type=int, default=120, help="scoring jobs: pairs")
    p.add_argument("--chunk-size", type=int, default=8, help="scoring jobs: --chunk-size")
    p.add_argument("--ner", help="scoring jobs: NER export (default: a tiny random one)")
    p.add_argument("--encoder", help="scoring jobs: entity encoder (default: a tiny random one)")
    p.add_argument("--writer-iterations", type=int, default=ITERATIONS, help="files the atomic-writers child rewrites")


def setup(root: Path, args) -> dict:
    root.mkdir(parents=True)
    out = make_inputs(root, args.pairs, args.seed, args.ner, args.encoder)
    out.update(chunk=args.chunk_size, iterations=args.writer_iterations)
    out["record"] = {"models": out["models"], "pairs": args.pairs, "chunk_size": args.chunk_size,
                     "writer_iterations": args.writer_iterations, "payload_numbers_per_file": PAYLOAD,
                     "inputs": "SYNTHETIC report-like texts (benchmarks.scoring.report_texts), seed --seed"}
    return out


def make_inputs(root: Path, pairs: int, seed: int, ner: str | None, encoder: str | None) -> dict:
    """The models and the input files the jobs copy into their folders."""
    from benchmarks.scoring.report_texts import report_texts

    models = {"ner": ner, "encoder": encoder, "random": not (ner and encoder)}
    if not ner or not encoder:
        from train.rehearsal.tiny import build_tiny_bert, build_tiny_iob_export

        ner = ner or build_tiny_iob_export(root / "tiny_ner", seed=0, head_std=0.3, o_bias=2.5)
        encoder = encoder or build_tiny_bert(root / "tiny_encoder", seed=0)
        models.update(ner=models["ner"] or "tiny random IOB export (train.rehearsal.tiny, seed 0)",
                      encoder=models["encoder"] or "tiny random BERT (train.rehearsal.tiny, seed 0)")
    texts = report_texts(3 * pairs, seed=seed)
    inputs = root / "inputs"
    inputs.mkdir()
    with open(inputs / "pairs.jsonl", "w", encoding="utf-8") as fh:
        for k in range(pairs):
            fh.write(json.dumps({"id": f"r{k}", "candidate": texts[k], "reference": texts[pairs + k]}) + "\n")
    for name, offset in (("refs", pairs), ("base", 0), ("new", 2 * pairs)):
        with open(inputs / f"{name}.jsonl", "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps({"text": texts[offset + k]}) + "\n" for k in range(pairs))
    return {"models": models, "ner": str(ner), "encoder": str(encoder), "inputs": inputs}


def _copy(setup: dict, names: list[str]):
    def prepare(work: Path) -> None:
        for name in names:
            shutil.copy(setup["inputs"] / name, work / name)
    return prepare


def _change(name: str, field: str):
    """Add a word to the first record's ``field`` in the input ``name``; the refusal must name the file."""
    def change(work: Path):
        path = work / name
        before = path.read_bytes()
        first, rest = before.split(b"\n", 1)
        record = json.loads(first)
        record[field] += " changed"
        path.write_bytes(json.dumps(record).encode() + b"\n" + rest)
        return str(path), lambda: path.write_bytes(before)
    return change


def _warm(setup: dict):
    def warm() -> None:  # the fork launcher's children then start with the models' code imported
        from radscore.registry import make_scorer

        scorer = make_scorer("ratescore", ner=setup["ner"], encoder=setup["encoder"])
        scorer.compute_score(["Heart size normal."], ["No effusion."])
    return warm


def score_job(fmt: str):
    def build(setup: dict) -> Job:
        chunk = setup["chunk"]

        def command(work: Path):
            pairs = str(work / "pairs.jsonl")
            return "radscore.cli", ["score", "--ner", setup["ner"], "--encoder", setup["encoder"],
                                    "--candidates", pairs, "--references", pairs, "--field", "candidate",
                                    "--reference-field", "reference", "--id-column", "id",
                                    "--out", str(work / f"scores.{fmt}"), "--chunk-size", str(chunk), "--quiet"]
        return Job(f"score-{fmt}", _copy(setup, ["pairs.jsonl"]), command, lambda w: [w / f"scores.{fmt}"],
                   resume=["--resume"], records=lambda w: [w / f"scores.{fmt}"],
                   change=_change("pairs.jsonl", "candidate"), chunk=chunk, warm=_warm(setup))
    return build


def compare_job(setup: dict) -> Job:
    chunk = setup["chunk"]

    def command(work: Path):
        return "radscore.cli", ["compare", "--ner", setup["ner"], "--encoder", setup["encoder"], "--field", "text",
                                "--references", str(work / "refs.jsonl"), "--candidates", f"base={work / 'base.jsonl'}",
                                "--candidates", f"new={work / 'new.jsonl'}", "--out-dir", str(work / "cmp"),
                                "--chunk-size", str(chunk), "--randomization", "500", "--quiet"]

    def scores(work: Path):
        return [work / "cmp" / "scores.base.jsonl", work / "cmp" / "scores.new.jsonl"]

    return Job("compare", _copy(setup, ["refs.jsonl", "base.jsonl", "new.jsonl"]), command,
               lambda w: [*scores(w), *(w / "cmp" / n for n in ("compare.json", "compare.md", "differences.png"))],
               resume=["--resume"], records=scores, change=_change("new.jsonl", "text"), chunk=chunk, warm=_warm(setup))


def atomic_writer_child(folder: Path, iterations: int = ITERATIONS) -> int:
    """Rewrite an export manifest, an affinity matrix and a results JSON ``iterations`` times with
    radscore's writers; iteration i writes i everywhere (so a torn or mixed file shows)."""
    from radscore.atomic import write_json_atomic
    from radscore.export import write_manifest
    from radscore.scoring import AffinityMatrix

    for i in range(iterations):
        write_manifest(folder, "ratescore", ner="ner", encoder="encoder", iteration=i, payload=[i] * PAYLOAD)
        AffinityMatrix.uniform(1 + i, 1 + i).save(folder / "affinity_matrix.json")
        write_json_atomic(folder / "results.json", {"iteration": i, "values": [i] * PAYLOAD})
    return 0


def _check_atomic(work: Path) -> list[str]:
    """Every file present parses and holds one iteration's content whole."""
    from radscore.export import read_manifest
    from radscore.scoring import AffinityMatrix

    bad = []
    try:
        if (work / "radscore_manifest.json").exists():
            m = read_manifest(work, "ratescore")
            if m["payload"] != [m["iteration"]] * PAYLOAD:
                bad.append("radscore_manifest.json: mixed content")
        if (work / "affinity_matrix.json").exists():
            AffinityMatrix.load(work / "affinity_matrix.json")
        if (work / "results.json").exists():
            r = json.loads((work / "results.json").read_text())
            if r["values"] != [r["iteration"]] * PAYLOAD:
                bad.append("results.json: mixed content")
    except (ValueError, KeyError) as err:
        bad.append(f"a file does not load: {err}")
    return bad


def atomic_job(setup: dict) -> Job:
    names = ["radscore_manifest.json", "affinity_matrix.json", "results.json"]

    def outputs(work: Path):  # complete after a run; after a kill any iteration's whole file is fine
        return [work / n for n in names]
    return Job("atomic-writers", lambda work: None, lambda work: ("benchmarks.scoring.kill_jobs", [
        "atomic-writers", str(work), "--iterations", str(setup["iterations"])]),
               outputs, check=_check_atomic, complete_only=False)


JOBS = {"score-jsonl": score_job("jsonl"), "score-csv": score_job("csv"), "compare": compare_job,
        "atomic-writers": atomic_job}


def main(argv: list[str] | None = None) -> int:
    """The atomic-writers child: ``atomic-writers FOLDER [--iterations N]``."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.scoring.kill_jobs")
    p.add_argument("job", choices=["atomic-writers"])
    p.add_argument("folder")
    p.add_argument("--iterations", type=int, default=ITERATIONS)
    args = p.parse_args(argv)
    return atomic_writer_child(Path(args.folder), args.iterations)


if __name__ == "__main__":
    sys.exit(main())
