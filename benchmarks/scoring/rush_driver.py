"""Split texts into sentences with the released ``ratescore`` package's own splitter: executed
INSIDE the released package's venv (``.venv-ratescore``, see ``released_package.ensure_released_venv``),
never imported by radscore.

    .venv-ratescore/bin/python benchmarks/scoring/rush_driver.py IN.json OUT.json

``IN.json``: ``{"texts": [...], "detail": false, "repeat": 1}``.

``OUT.json``: ``sentences`` (per text, what ``RaTEScore.utils.sentence_split([text])`` keeps: the
stripped sentences with a word and at least 3 characters), ``seconds`` (per text, the median over
``repeat`` runs of ``nlp(text)`` plus the strip and filter), the ``versions`` of medspacy, PyRuSH,
spaCy and ratescore, and the rules file's path. With ``detail``: ``raw`` (the unstripped
``doc.sents`` texts), ``rush`` (PyRuSH's character spans before they are snapped to tokens) and
``tokens`` (spaCy's token offsets).

The pipeline object is the package's own (``RaTEScore.utils.nlp``), so its loading arguments are
exactly the released ones. PyRuSH logs at DEBUG level through loguru; the driver raises that
logger's level so the timing measures the splitter, not the log sink.
"""

import json
import statistics
import sys
import time
from importlib.metadata import version


def main(in_path: str, out_path: str) -> None:
    job = json.loads(open(in_path, encoding="utf-8").read())
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="WARNING")
    from RaTEScore.utils import nlp, sentence_split

    rush_pipe = nlp.get_pipe("medspacy_pyrush")
    texts, detail, repeat = job["texts"], bool(job.get("detail")), max(1, int(job.get("repeat", 1)))
    out = {"sentences": [], "seconds": [], "rules_path": rush_pipe.rules_path,
           "versions": {n: version(n) for n in ("medspacy", "PyRuSH", "spacy", "ratescore")}}
    if detail:
        out.update(raw=[], rush=[], tokens=[])
    for text in texts:
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            kept = sentence_split([text])[0]
            times.append(time.perf_counter() - t0)
        out["sentences"].append(kept)
        out["seconds"].append(statistics.median(times))
        if detail:
            doc = nlp(text)
            out["raw"].append([str(s) for s in doc.sents])
            out["rush"].append([[s.begin, s.end] for s in rush_pipe.rush.segToSentenceSpans(text)])
            out["tokens"].append([[t.idx, len(t.text)] for t in nlp.make_doc(text)])
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(out, f)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: rush_driver.py IN.json OUT.json")
    main(sys.argv[1], sys.argv[2])
