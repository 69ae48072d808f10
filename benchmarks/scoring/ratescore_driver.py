"""Run the released ``ratescore`` 0.6.0 package on report pairs: executed INSIDE its own venv
(``.venv-ratescore``, made on first use by ``ensure_released_venv`` in ``benchmarks/scoring/released_package.py``;
the ``released_python`` fixture of ``tests/conftest.py`` calls it), never imported by radscore.

    .venv-ratescore/bin/python benchmarks/scoring/ratescore_driver.py IN.json OUT.json

``IN.json``: ``{"candidates": [...], "references": [...], "ner": folder, "encoder": folder,
"matrix": "long" | "short" | JSON path, "batch_size": 1, "entities": false, "use_gpu": false,
"warmup_pairs": 0}``. ``use_gpu`` is the package's own switch (its models and inputs on ``cuda``,
i.e. the first GPU); ``warmup_pairs`` scores that many leading pairs once before the timed call
(on CUDA the first call also pays for the kernels' and cuBLAS's start-up).

``OUT.json``: ``scores`` (the package's list, as returned), ``alignment`` (for each returned score,
the candidate and reference indices it was computed from: the package drops reports with no kept
sentence, so they differ after such a report), ``sentences`` (each distinct report's kept
sentences, from the package's own splitter), optionally ``entities`` (the package's entity lists
of each kept report, candidates then references), ``load_seconds``, ``score_seconds``,
``peak_rss_mb``, ``cpu_capability`` (the instruction set torch's CPU kernels ran with: the benchmark's
``--emulate-isa`` checks it) and library versions.

PyRuSH 1.0.13 logs every sentence at DEBUG level through loguru; the driver raises that logger's
level to WARNING so the timing measures the scorer, not the terminal.
"""

import json
import resource
import sys
import time
from importlib.metadata import version


def main(in_path: str, out_path: str) -> None:
    job = json.loads(open(in_path, encoding="utf-8").read())
    t0 = time.perf_counter()
    from loguru import logger

    import torch
    from RaTEScore import RaTEScore
    from RaTEScore.score import run_ner
    from RaTEScore.utils import sentence_split

    logger.remove()
    logger.add(sys.stderr, level="WARNING")
    scorer = RaTEScore(bert_model=job["ner"], eval_model=job["encoder"], batch_size=int(job.get("batch_size", 1)),
                       use_gpu=bool(job.get("use_gpu", False)), affinity_matrix=job.get("matrix", "long"))
    load_seconds = time.perf_counter() - t0

    cands, refs = job["candidates"], job["references"]
    warm = int(job.get("warmup_pairs", 0))
    if warm:
        scorer.compute_score(cands[:warm], refs[:warm])
    t0 = time.perf_counter()
    scores = scorer.compute_score(cands, refs)
    score_seconds = time.perf_counter() - t0
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    sentences = {text: sentence_split([text])[0] for text in dict.fromkeys(cands + refs)}
    kept_c = [i for i, t in enumerate(cands) if sentences[t]]
    kept_r = [i for i, t in enumerate(refs) if sentences[t]]
    out = {"scores": [float(s) for s in scores], "alignment": [list(p) for p in zip(kept_c, kept_r)],
           "sentences": sentences, "load_seconds": load_seconds, "score_seconds": score_seconds,
           "peak_rss_mb": peak_rss_mb, "batch_size": scorer.batch_size, "device": str(scorer.device),
           "warmup_pairs": warm, "cpu_capability": torch.backends.cpu.get_cpu_capability(),
           "versions": {name: version(name) for name in ("ratescore", "torch", "transformers", "medspacy", "PyRuSH",
                                                         "spacy", "numpy", "pandas")}}
    if job.get("entities"):
        args = (scorer.idx2label, scorer.tokenizer, scorer.model, scorer.device, scorer.batch_size)
        out["entities"] = {"candidates": run_ner(cands, *args), "references": run_ner(refs, *args)}
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(out, f)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: ratescore_driver.py IN.json OUT.json")
    main(sys.argv[1], sys.argv[2])
