"""Build the SYNTHETIC benchmark sets from the authored corpus: every label is known by design.

:func:`generate` makes, from reference reports and a seed, candidates with known edits
(:mod:`data.synth.edits`, :mod:`data.synth.rewrites`) and their labels (:mod:`data.synth.labels`),
then writes them in the published formats (:mod:`data.synth.writers`). Each set draws from its own
``random.Random(f"{seed}:{set name}")``, so changing one size never changes another set, and the
same seed always gives byte-identical files.

Sizes (``--sizes rexval=120,task1=400,...``): ``rexval`` pairs (rounded up to whole studies of 4
candidates), ``task1`` sentence pairs, ``task2`` paragraph pairs, ``task3`` triads, ``er2`` rows
per scoring system (rounded up to whole references of 3 candidates), ``bleurt`` rows. A reference
is reused (with new random edits) only when a set asks for more items than the corpus has.

Every set follows the corpus's one split (:mod:`data.split`): an item's reference, its candidate and
every sentence inserted into it come from reports of one side. Texts are a report's findings and
impression (the sentences the generator edits); a preamble (INDICATION / TECHNIQUE / COMPARISON)
is not part of them. The evaluation-only sets (ReXVal
layout, Task 3 triads) use test-split references only; Task 1 and Task 2 are written to
``rate_train``/``rate_test`` by their reference's side (``dev`` counts as train there); ER² and
ClinicalBLEURT rows carry their reference's side in a ``split`` key (``train``/``dev``/``test``).
ClinicalBLEURT rows are section pairs, as the paper's training data: one section of a reference
(findings or impression) against an edited copy of that section alone.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
from pathlib import Path

from data.annotation import AnnotationError, Report, parse_annotated, read_reports
from data.synth import rewrites
from data.synth.catalog import (CUE_MEANING_KINDS, ERROR_KINDS, LAYOUT_COUNTS, LAYOUT_KINDS, PLANNED_EDITS,
                                PLANNED_MEANING_KINDS, SENTENCE_KINDS, SENTENCE_MEANING_KINDS,
                                TASK1_MEANING_COUNTS, add_errors, add_from, meaning_preserving,
                                matched_pair, planned_edits)
from data.synth.draft import FINDING, NEGATED, POSITIVE, Draft
from data.clinical_bleurt import clinical_bleurt_quality
from data.rexval import CANDIDATE_TYPES
from data.synth.labels import (RaterNoise, bleurt_counts, mrscore_items, radcliq_subscores,
                               simulate_raters, task1_rating, task2_score)
from data.synth.lexicon import Lexicon, load_lexicon
from data.synth.writers import write_all
from data.split import CorpusSplit, split_for

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "data" / "samples"
DEFAULT_OUT = REPO / "checkpoints" / "synthetic"
# bleurt: section pairs are short, so more of them (3,000: ~2,100 train, ~450 test pairs; 1,500 reached
# test Pearson 0.42 and 600 whole-report rows stayed below the trivial baselines, docs/clinical-bleurt.md);
# er2: 1,800 RadCliQ rows (~2,300 train, ~400 test pairs): the fully fine-tuned sample model needs them
# (trained on 600 rows it reaches test pair accuracy 0.681, Kendall 0.157 on the same 408 test pairs
# against 0.841 / 0.335 on 1,800, docs/er2score.md)
DEFAULT_SIZES = {"rexval": 120, "task1": 400, "task2": 600, "task3": 150, "er2": 1800, "bleurt": 3000}
REXVAL_ERRORS = (0, 1, 1, 2, 2, 3, 3, 4, 5, 6)  # drawn per candidate
TASK2_ERRORS = REXVAL_ERRORS  # Task 2: the same, whatever the report's length
TRIAD_PLANNED = (0, 1, 2, 3, 4)  # meaning-preserving edits of each Task 3 member beside the flip / cue rewording
RADCLIQ_TIERS = ((0, 2), (3, 4), (5, 6))  # SPEC §3.2 quality tiers by error count
MRSCORE_PLANS = (((0, 1), (0, 1)), ((2, 3), (0, 2)), ((4, 7), (1, 3)))  # (errors, typos) ranges


class SynthError(ValueError):
    """Bad generator input (sizes, corpus)."""


def corpus_paths(reports: str | Path | None = None) -> list[Path]:
    """The corpus: ``reports`` if given, else ``data/samples/reports.jsonl``, else the parts."""
    if reports:
        path = Path(reports)
        paths = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    elif (SAMPLES / "reports.jsonl").is_file():
        paths = [SAMPLES / "reports.jsonl"]
    else:
        paths = sorted((SAMPLES / "parts").glob("*.jsonl"))
    if not paths or not all(p.is_file() for p in paths):
        raise SynthError(f"no corpus file found (looked at {reports or SAMPLES})")
    return paths


def load_corpus(paths) -> list[Report]:
    reports, seen = [], {}
    for path in paths:
        for rep in read_reports(path):
            if rep.id in seen:
                raise AnnotationError(f"{path}: report id {rep.id!r} also in {seen[rep.id]}")
            seen[rep.id] = path
            reports.append(rep)
    if len(reports) < 2:
        raise SynthError("the generator needs at least two reference reports")
    return sorted(reports, key=lambda r: r.id)


def parse_sizes(text: str | None) -> dict[str, int]:
    """``"rexval=50,task1=400"`` -> sizes, the others at their defaults."""
    sizes = dict(DEFAULT_SIZES)
    for item in filter(None, (text or "").split(",")):
        key, _, value = item.partition("=")
        key = key.strip()
        if key not in DEFAULT_SIZES:
            raise SynthError(f"unknown set {key!r} in --sizes; expected some of {list(DEFAULT_SIZES)}")
        if not value.strip().isdigit():
            raise SynthError(f"--sizes {item!r}: expected {key}=<non-negative integer>")
        sizes[key] = int(value)
    return sizes


def _stream(items, rng: random.Random):
    while True:
        order = list(items)
        rng.shuffle(order)
        yield from order


class Generator:
    """Candidates for one corpus and lexicon; each builder takes its own seeded ``rng``."""

    def __init__(self, reports: list[Report], lex: Lexicon | None = None, split: CorpusSplit | None = None):
        self.reports = reports
        self.lex = lex or load_lexicon()
        self.split = split or split_for(reports)
        self.test_reports = [r for r in reports if self.split.of(r.id) == "test"]
        if not self.test_reports:
            raise SynthError("the corpus split has no test report: the evaluation sets need some")
        self.donors: dict[tuple, list] = {}  # sentences with a present finding
        self.negatives: dict[tuple, list] = {}  # sentences of negated findings only
        for rep in reports:
            for section in ("findings", "impression"):
                for sent in getattr(rep, section):
                    key = (self.split.of(rep.id), rep.anatomy)
                    types = {e.type for e in sent.entities}
                    if types & set(POSITIVE):
                        self.donors.setdefault(key, []).append((rep.id, section, sent, rep.modality))
                    elif types & set(NEGATED):
                        self.negatives.setdefault(key, []).append((rep.id, section, sent, rep.modality))

    def _donors(self, rep: Report, rng: random.Random, k: int = 16, table: dict | None = None):
        """Sentences to insert: same anatomy, same side of the corpus split, another case, and the
        same modality where the split side has any (else another modality of the anatomy)."""
        table = self.donors if table is None else table
        pool = [d for d in table.get((self.split.of(rep.id), rep.anatomy), [])
                if self.split.case(d[0]) != rep.case]
        same = [d for d in pool if d[3] == rep.modality]
        pool = same or pool
        return [d[:3] for d in rng.sample(pool, min(k, len(pool)))]

    def candidate(self, rep: Report, rng: random.Random, n_errors: int, n_typos: int = 0,
                  kinds=ERROR_KINDS, n_meaning: int | None = None, section: str | None = None) -> dict | None:
        """A finalized candidate of ``rep`` (None when it would equal the reference), with
        ``n_meaning`` meaning-preserving edits (default: ``n_errors`` and these together drawn from
        :data:`PLANNED_EDITS`, generator v3);
        of one ``section`` ("findings" or "impression": reference and candidate hold only it) when given."""
        if section is None:
            draft = Draft.from_report(rep)
        else:
            draft = Draft.from_sentences(rep.id, [(section, s) for s in getattr(rep, section)],
                                         rep.anatomy, rep.modality)
        # generator v3: a plan of edits whose size and surface operations do not depend on how
        # many of them are errors (data.synth.catalog.planned_edits)
        n_total = rng.choice(PLANNED_EDITS) if n_meaning is None else n_errors + n_meaning
        negatives = self._donors(rep, rng, table=self.negatives)
        planned_edits(draft, rng, self.lex, n_errors, n_total, self._donors(rep, rng), negatives, kinds)
        if n_typos:
            add_from(draft, n_typos, rng, self.lex, [rewrites.find_spelling, rewrites.find_grammar])
        meaning_preserving(draft, rng, self.lex, rng.choice(LAYOUT_COUNTS), LAYOUT_KINDS)
        if draft.text == draft.reference:
            meaning_preserving(draft, rng, self.lex, negatives=negatives)
        return None if draft.text == draft.reference else draft.finalize()

    def _attempts(self, n: int) -> range:
        return range(max(100, 20 * n))

    # -- sets ----------------------------------------------------------------------------------
    def rexval(self, n_pairs: int, rng: random.Random, noise: RaterNoise) -> list[dict]:
        studies, refs = [], _stream(self.test_reports, rng)  # evaluation only: test references
        n_studies = math.ceil(n_pairs / len(CANDIDATE_TYPES))
        for _ in self._attempts(n_studies):
            if len(studies) >= n_studies:
                break
            rep, cands = next(refs), {}
            for ctype in CANDIDATE_TYPES:
                cand = self.candidate(rep, rng, rng.choice(REXVAL_ERRORS))
                if cand is None:
                    break
                cand["raters"] = simulate_raters(cand["edits"], rng, noise)
                cands[ctype] = cand
            if len(cands) == len(CANDIDATE_TYPES):
                studies.append({"study_id": f"synthetic-{len(studies):04d}", "reference_id": rep.id,
                                "reference": Draft.from_report(rep).reference, "candidates": cands})
        return studies

    def task1(self, n: int, rng: random.Random) -> list[dict]:
        # a test-side item never uses a sentence that also occurs, word for word, in a training
        # report ("No pneumothorax." is common): its pair could otherwise be a training pair too
        seen_in_training = {s.text for rep in self.reports if self.split.of(rep.id) != "test"
                            for s in rep.findings + rep.impression}
        pool = [(rep, sec, k, s) for rep in self.reports for sec in ("findings", "impression")
                for k, s in enumerate(getattr(rep, sec)) if s.entities
                and not (self.split.of(rep.id) == "test" and s.text in seen_in_training)]
        out, stream = [], _stream(pool, rng)
        for _ in self._attempts(n):
            if len(out) >= n:
                break
            rep, sec, k, sent = next(stream)
            draft = Draft.from_sentences(rep.id, [(sec, sent)], rep.anatomy, rep.modality)
            add_errors(draft, rng.choice((0, 1, 1, 2, 2, 3)), rng, self.lex, (), SENTENCE_KINDS)
            meaning_preserving(draft, rng, self.lex, rng.choice(TASK1_MEANING_COUNTS),
                               SENTENCE_MEANING_KINDS)
            if draft.text == draft.reference:
                meaning_preserving(draft, rng, self.lex, 1, SENTENCE_MEANING_KINDS)
            if draft.text == draft.reference:
                continue
            cand = draft.finalize()
            n_cand = sum(len(parse_annotated(s["annotated"]).entities)
                         for s in cand["candidate_sentences"])
            errors, potential, rating = task1_rating(len(sent.entities), n_cand, cand["edits"])
            cand.update(id=f"task1-{len(out):05d}", sentence=f"{sec}[{k}]",
                        split=self.split.synthetic_side(rep.id),
                        labels={"errors": errors, "potential_errors": potential, "rate": rating})
            out.append(cand)
        return out

    def task2(self, n: int, rng: random.Random) -> list[dict]:
        out, refs = [], _stream(self.reports, rng)
        for _ in self._attempts(n):
            if len(out) >= n:
                break
            rep = next(refs)
            n_find = sum(1 for s in rep.sentences for e in s.entities if e.type in FINDING)
            # error and rewrite counts drawn independently of the report's length (a long report
            # does not get more errors), the score from the errors' clinical weights
            cand = self.candidate(rep, rng, rng.choice(TASK2_ERRORS))
            if cand is None:
                continue
            kept, score = task2_score(cand["edits"])
            cand.update(id=f"task2-{len(out):05d}", split=self.split.synthetic_side(rep.id),
                        labels={"findings": n_find, "weights": [e["weight"] for e in cand["edits"]
                                                                if e["category"] is not None],
                                "kept": kept, "Score": score})
            out.append(cand)
        return out

    def task3(self, n: int, rng: random.Random) -> list[dict]:
        out, refs = [], _stream(self.test_reports, rng)  # evaluation only: test references
        for _ in self._attempts(n):
            if len(out) >= n:
                break
            rep = next(refs)
            # generator v3, matched members: the opposite gets one flip (a negation or an antonym)
            # where the synonym gets one rewording of a negation or a normal statement
            # (CUE_MEANING_KINDS: "No X" -> "X is not seen", "normal in size" -> "not enlarged",
            # ...), so cue words alone do not tell them apart; then both get the same number of
            # planned meaning-preserving edits (surface operations drawn alike), each member its
            # own number of them (TRIAD_PLANNED) and its own layout changes. Inserted sentences come from the same split side, anatomy and modality.
            negatives = self._donors(rep, rng, table=self.negatives)
            syn, opp = Draft.from_report(rep), Draft.from_report(rep)
            if not matched_pair(syn, opp, rng, self.lex):
                continue
            for member in (syn, opp):  # drawn apart: matched counts would tie every counter
                planned_edits(member, rng, self.lex, 0, rng.choice(TRIAD_PLANNED), negatives=negatives)
                meaning_preserving(member, rng, self.lex, rng.choice(LAYOUT_COUNTS), LAYOUT_KINDS)
            s, o = syn.finalize(), opp.finalize()
            out.append({"id": f"task3-{len(out):05d}", "reference_id": rep.id,
                        "original": syn.reference, "synonym": s["candidate"], "opposite": o["candidate"],
                        "synonym_edits": s["edits"], "opposite_edits": o["edits"],
                        "synonym_sentences": s["candidate_sentences"],
                        "opposite_sentences": o["candidate_sentences"]})
        return out

    def er2(self, n_rows: int, rng: random.Random) -> tuple[list[dict], list[dict]]:
        radcliq, mrscore, refs = [], [], _stream(self.reports, rng)
        n_refs = math.ceil(n_rows / 3)
        done = 0
        for _ in self._attempts(n_refs):
            if done >= n_refs:
                break
            rep = next(refs)
            rc = [self.candidate(rep, rng, rng.randint(lo, hi)) for lo, hi in RADCLIQ_TIERS]
            mr = [self.candidate(rep, rng, rng.randint(*e), rng.randint(*t)) for e, t in MRSCORE_PLANS]
            if any(c is None for c in rc + mr):
                continue
            for cand in rc:
                subs = radcliq_subscores(cand["edits"])
                total = sum(subs.values())
                cand.update(id=f"radcliq-{len(radcliq):05d}", system="radcliq", subscores=subs,
                            split=self.split.of(rep.id),
                            total=float(total), higher_is_better=False,
                            tier="0-2" if total <= 2 else "3-4" if total <= 4 else "5+")
                radcliq.append(cand)
            for cand in mr:
                items, subs, total = mrscore_items(cand["edits"])
                cand.update(id=f"mrscore-{len(mrscore):05d}", system="mrscore", subscores=subs,
                            split=self.split.of(rep.id),
                            total=total, item_errors=items, higher_is_better=True,
                            tier="70-100" if total >= 70 else "40-70" if total >= 40 else "0-40")
                mrscore.append(cand)
            done += 1
        return radcliq, mrscore

    def bleurt(self, n: int, rng: random.Random, weights: dict | None = None) -> list[dict]:
        """Section pairs, as ClinicalBLEURT's training data (SPEC §4: 17,852 section pairs): each
        row is one section of a reference (findings or impression, drawn among its non-empty
        ones) against an edited copy of that section alone."""
        out, refs = [], _stream(self.reports, rng)
        for _ in self._attempts(n):
            if len(out) >= n:
                break
            rep = next(refs)
            section = rng.choice([sec for sec in ("findings", "impression") if getattr(rep, sec)])
            n_sents = len(getattr(rep, section))
            # our choice: up to one error per sentence plus one (at most 5) and 0-2 typos, so that
            # the target 1 - error_score / max_sentlen covers [0, 1] for short and long sections alike
            # (below 0 when the weighted errors exceed the sentence count: 118 of the 3,000 default rows)
            cand = self.candidate(rep, rng, rng.randint(0, min(5, n_sents + 1)), rng.randint(0, 2),
                                  section=section)
            if cand is None:
                continue
            counts = bleurt_counts(cand["edits"])
            quality, error_score, max_sentlen = clinical_bleurt_quality(
                cand["reference"], cand["candidate"], counts, weights)
            cand.update(id=f"bleurt-{len(out):05d}", split=self.split.of(rep.id), section=section,
                        score=quality, error_score=error_score,
                        max_sentlen=max_sentlen, **counts)
            out.append(cand)
        return out


def generate(out_dir: str | Path = DEFAULT_OUT, seed: int = 0, sizes: dict | None = None,
             reports: str | Path | None = None, lexicon_dir: str | Path | None = None,
             noise: RaterNoise = RaterNoise(), bleurt_weights: dict | None = None,
             progress=None, split: str | Path | None = None) -> dict:
    """Generate every set and write it under ``out_dir``; returns ``{set: item count}``.

    ``progress``, when given, is called with a short message before each set is built. ``split``: a
    split file other than the corpus's own (``data/samples/split_unseen.json``, the unseen-domain split);
    its sides decide every item's side as the corpus split does otherwise.
    """
    sizes = {**DEFAULT_SIZES, **(sizes or {})}
    for key, value in sizes.items():
        if key not in DEFAULT_SIZES or not isinstance(value, int) or value < 0:
            raise SynthError(f"bad size {key}={value!r}; expected sets {list(DEFAULT_SIZES)} >= 0")
    paths = corpus_paths(reports)
    corpus = load_corpus(paths)
    gen = Generator(corpus, load_lexicon(lexicon_dir), split_for(corpus, paths[0] if len(paths) == 1 else None, split))
    rng = {name: random.Random(f"{seed}:{name}") for name in DEFAULT_SIZES}
    say = progress or (lambda message: None)
    builders = {
        "rexval": lambda: gen.rexval(sizes["rexval"], rng["rexval"], noise),
        "task1": lambda: gen.task1(sizes["task1"], rng["task1"]),
        "task2": lambda: gen.task2(sizes["task2"], rng["task2"]),
        "task3": lambda: gen.task3(sizes["task3"], rng["task3"]),
        "er2": lambda: gen.er2(sizes["er2"], rng["er2"]),
        "bleurt": lambda: gen.bleurt(sizes["bleurt"], rng["bleurt"], bleurt_weights),
    }
    sets = {}
    for name, build in builders.items():
        say(f"synthetic {name}: {sizes[name]} items from {len(gen.reports)} reports")
        if name == "er2":
            sets["radcliq"], sets["mrscore"] = build()
        else:
            sets[name] = build()
    info = {"seed": seed, "sizes": sizes, "corpus": [str(p) for p in paths],
            "n_reports": len(gen.reports), "n_test_reports": len(gen.test_reports), "noise": noise,
            "bleurt_weights": bleurt_weights}
    if split is not None:
        info.update(split=str(split), held_out_anatomies=list(gen.split.held_out_anatomies))
    write_all(Path(out_dir), sets, info)
    write_fingerprint(Path(out_dir), fingerprint(paths, lexicon_dir, split), seed, sizes, split)
    counts = {k: len(v) for k, v in sets.items()}
    counts["rexval"] = len(sets["rexval"]) * len(CANDIDATE_TYPES)
    return counts


FINGERPRINT = "generator_synthetic.json"  # every file of a set says synthetic


#: the version of what the generator writes. Raise it with any change of the code that changes a byte of
#: the sets (tests/data/test_synth_generate.py holds the digest of the default sets and fails until the
#: digest is updated); a change that keeps every byte, such as a faster finder, keeps it, so the sets made
#: before stay current
OUTPUT_VERSION = 3


def fingerprint(paths: list[Path], lexicon_dir: str | Path | None = None, split: str | Path | None = None) -> str:
    """SHA-256 (16 hex digits) of what generated sets are made from: :data:`OUTPUT_VERSION`, the
    lexicons, the corpus files and the corpus's stored split (or ``split``, the split file given
    instead). Sets written by another output version, lexicon or corpus differ in it."""
    lexicons = Path(lexicon_dir) if lexicon_dir else REPO / "data" / "lexicons"
    files = sorted(lexicons.glob("*.yaml")) + list(paths)
    if split is not None:
        files.append(Path(split))
    else:
        files += [p.parent / "split.json" for p in paths[:1] if (p.parent / "split.json").is_file()]
    h = hashlib.sha256(f"data.synth output version {OUTPUT_VERSION}\0".encode())
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def write_fingerprint(out_dir: Path, value: str, seed: int, sizes: dict, split: str | Path | None = None) -> None:
    record = {"fingerprint": value, "seed": seed, "sizes": sizes}
    if split is not None:
        record["split"] = Path(split).name
    (out_dir / FINGERPRINT).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def stale_reason(out_dir: str | Path, paths: list[Path], seed: int = 0, sizes: dict | None = None) -> str | None:
    """None when ``out_dir`` holds sets this generator would write for ``paths``, ``seed`` and
    ``sizes``; else why not (missing, written by another generator version or corpus, or with
    another seed or sizes)."""
    out_dir = Path(out_dir)
    if not (out_dir / "SYNTHETIC_README.md").is_file():
        return "missing"
    try:
        stored = json.loads((out_dir / FINGERPRINT).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return f"no readable {FINGERPRINT} (written by an older generator)"
    if stored.get("fingerprint") != fingerprint(paths):
        return "written by another version of the generator, its lexicons or the corpus"
    if stored.get("seed") != seed or stored.get("sizes") != {**DEFAULT_SIZES, **(sizes or {})}:
        return f"made with seed {stored.get('seed')} and sizes {stored.get('sizes')}"
    return None


def generate_default(out_dir: str | Path = DEFAULT_OUT, seed: int = 0, force: bool = False,
                     reports: str | Path | None = None, progress=None) -> dict | None:
    """Generate the small default sets unless ``out_dir`` already holds the ones this generator
    makes (same code, lexicons, corpus, seed and sizes: :func:`stale_reason`), for make targets.
    Sets written by another version are regenerated, with a message saying why.

    Returns the counts, or None when the sets were already there.
    """
    reason = stale_reason(out_dir, corpus_paths(reports), seed)
    if reason is None and not force:
        return None
    if reason != "missing" and not force:
        print(f"{out_dir}: regenerating the synthetic sets: {reason}", flush=True)
    return generate(out_dir, seed, DEFAULT_SIZES, reports, progress=progress)

