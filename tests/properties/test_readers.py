"""Property-based tests (hypothesis) of every reader and of the scorers' input checks.

For each reader, generated files are either valid (then every record comes back, in order, with
its texts and numbers unchanged) or broken on purpose: arbitrary unicode, empty and huge fields,
values of the wrong type, shuffled columns, extra columns, truncated files. A broken file gives
the reader's own error naming the file (and the row where there is one), or a defined result
whose records are still the file's records in order: never an unrelated exception, never a
record shifted or changed.

Example counts are kept small so that the whole module runs in well under a minute;
``HYPOTHESIS_PROFILE=thorough`` runs 10x more (the default: 100-320 examples per reader).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from data.annotation import AnnotationError, parse_annotated, read_reports, strip_annotation
from data.clinical_bleurt import read_clinical_bleurt_jsonl
from data.rate_eval import read_rate_eval_task1, read_rate_eval_task2, read_rate_eval_task3
from data.ratener import RaTENERFormatError, load_split
from data.ratings import RatingFormatError, read_bleurt_jsonl, read_er2_jsonl, read_rating_csv
from data.rexval import read_rexval
from radscore.labels import ENTITY_TYPES, IOB_LABELS
from radscore.systems import RADCLIQ

SCALE = 40 if os.environ.get("HYPOTHESIS_PROFILE") == "thorough" else 4


def examples(n: int):
    return settings(max_examples=n * SCALE, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.large_base_example])


# --- values ----------------------------------------------------------------------------------------
CHARS = st.characters(exclude_categories=("Cs",))  # any code point a UTF-8 file can hold
TEXT = st.text(CHARS, min_size=1, max_size=30).filter(lambda s: s.strip())
HUGE = st.just("Small left pleural effusion. " * 4000)  # ~120k characters
REPORT = st.one_of(TEXT, TEXT, TEXT, HUGE)
ANY = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=10**300, max_value=10**400),
                st.floats(), st.text(CHARS, max_size=10), st.just(""), st.just("   "),
                st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


def _tmp() -> Path:
    return Path(tempfile.mkdtemp(prefix="radscore-props-"))


def outcome(read, error, path: Path):
    """``(result, None)`` or ``(None, err)`` for the reader's own error naming ``path``; any other
    exception propagates and fails the property."""
    try:
        return read(), None
    except error as err:
        assert path.name in str(err), f"the error does not name the file {path.name}: {err}"
        return None, err


@st.composite
def damage(draw, records: list[dict], keys: list[str]):
    """Records with some fields replaced by arbitrary values or removed, plus extra keys; and
    whether anything was changed."""
    changed = False
    records = [dict(r) for r in records]
    for _ in range(draw(st.integers(0, 3))):
        k = draw(st.integers(0, len(records) - 1))
        key = draw(st.sampled_from(keys))
        if draw(st.booleans()):
            records[k][key] = draw(ANY)
        else:
            records[k].pop(key, None)
        changed = True
    if draw(st.booleans()):
        records[0][draw(st.text(max_size=5))] = draw(ANY)  # an extra key (may replace a real one)
        changed = True
    return records, changed


def write_jsonl(path: Path, records: list[dict], ascii_only: bool, cut: int | None) -> bool:
    data = "".join(json.dumps(r, ensure_ascii=ascii_only) + "\n" for r in records).encode("utf-8")
    path.write_bytes(data[:cut] if cut is not None else data)
    return cut is not None and cut < len(data)


def write_csv(path: Path, columns: list[str], rows: list[dict], cut: int | None) -> bool:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns)  # "\r\n": fields holding \r or \n are quoted
    writer.writeheader()
    writer.writerows(rows)
    data = buf.getvalue().encode("utf-8")
    path.write_bytes(data[:cut] if cut is not None else data)
    return cut is not None and cut < len(data)


def read_jsonl_case(case, name: str, read):
    """Write a generated JSONL case and read it: ``(result or None, exact, records, broken,
    truncated)``; ``exact`` (nothing damaged, nothing cut) requires a result."""
    records, broken, changed, ascii_only, cut = case
    path = _tmp() / name
    truncated = write_jsonl(path, broken, ascii_only, cut)
    out, err = outcome(lambda: read(path), RatingFormatError, path)
    exact = not changed and not truncated
    if exact:
        assert err is None
    return out, exact, records, broken, truncated


def cut_point(draw):
    return draw(st.one_of(st.none(), st.none(), st.integers(0, 400)))


# --- BLEURT rows (reference, candidate, score) ---------------------------------------------------
@st.composite
def bleurt_file(draw):
    records = draw(st.lists(st.fixed_dictionaries({
        "reference": REPORT, "candidate": TEXT,
        "score": st.floats(-10, 10, allow_nan=False)}), min_size=1, max_size=5))
    broken, changed = draw(st.one_of(st.just((records, False)), damage(records, ["reference", "candidate", "score"])))
    return records, broken, changed, draw(st.booleans()), cut_point(draw)


@examples(60)
@given(bleurt_file())
def test_bleurt_rows(case):
    rows, exact, records, broken, truncated = read_jsonl_case(case, "bleurt.jsonl", read_bleurt_jsonl)
    if exact:
        assert [(r.reference, r.candidate, r.rating) for r in rows] == [
            (x["reference"], x["candidate"], x["score"]) for x in records]
    elif rows is not None:
        assert len(rows) <= len(broken) and (truncated or len(rows) == len(broken))
        for r, x in zip(rows, broken):  # nothing shifted: row k is record k
            assert (r.reference, r.candidate) == (x["reference"], x["candidate"])
            assert r.rating == float(x["score"])


# --- ER² rows --------------------------------------------------------------------------------------
@st.composite
def er2_file(draw):
    records = []
    for _ in range(draw(st.integers(1, 4))):
        subs = {item: draw(st.integers(0, 4)) for item in draw(st.permutations(RADCLIQ.items))}
        records.append({"reference": draw(REPORT), "candidate": draw(TEXT), "system": "radcliq",
                        "subscores": subs, "total": sum(subs.values())})
    broken, changed = draw(st.one_of(st.just((records, False)),
                                     damage(records, ["reference", "candidate", "system", "subscores", "total"])))
    if draw(st.booleans()):  # one sub-score of a record replaced by an arbitrary value
        k = draw(st.integers(0, len(broken) - 1))
        broken[k] = {**broken[k], "subscores": {**records[k]["subscores"], "omission": draw(ANY)}}
        changed = True
    return records, broken, changed, draw(st.booleans()), cut_point(draw)


@examples(60)
@given(er2_file())
def test_er2_rows(case):
    rows, exact, records, broken, _ = read_jsonl_case(case, "er2.jsonl", read_er2_jsonl)
    if exact:
        assert [(r.reference, r.candidate, r.subscores, r.total) for r in rows] == [
            (x["reference"], x["candidate"], {k: float(v) for k, v in x["subscores"].items()}, x["total"])
            for x in records]
    elif rows is not None:
        for r, x in zip(rows, broken):
            assert (r.reference, r.candidate) == (x["reference"], x["candidate"])
            assert r.total == pytest.approx(sum(r.subscores.values()))


# --- ClinicalBLEURT rows (counts or score; empty sections removed and counted) ----------------------
@st.composite
def clinical_bleurt_file(draw):
    records = []
    for _ in range(draw(st.integers(1, 5))):
        rec = {"reference": draw(st.one_of(REPORT, st.just(""), st.none())), "candidate": draw(TEXT),
               "section": draw(st.sampled_from(["HPI", "EXAM", "RESULTS", "ASSESSMENT"]))}
        if draw(st.booleans()):
            rec.update(critical=draw(st.integers(0, 3)), non_critical=draw(st.integers(0, 3)),
                       spelling=draw(st.integers(0, 3)))
        else:
            rec["score"] = draw(st.floats(-2, 2, allow_nan=False))
        records.append(rec)
    keys = ["reference", "candidate", "section", "critical", "score", "spelling"]
    broken, changed = draw(st.one_of(st.just((records, False)), damage(records, keys)))
    return records, broken, changed, draw(st.booleans()), cut_point(draw)


@examples(60)
@given(clinical_bleurt_file())
def test_clinical_bleurt_rows(case):
    result, _, records, broken, truncated = read_jsonl_case(case, "bleurt_rows.jsonl", read_clinical_bleurt_jsonl)
    if result is None:
        return
    rows, summary = result
    assert summary.kept == len(rows) and summary.kept + summary.removed == summary.lines  # nothing silent
    if not truncated:
        assert summary.lines == len(broken)
        kept = [x for x in broken if x.get("reference") and str(x["reference"]).strip()
                and x.get("candidate") and str(x["candidate"]).strip()]
        assert [(r.reference, r.candidate) for r in rows] == [(x["reference"], x["candidate"]) for x in kept]
    for r in rows:
        assert math.isfinite(r.rating)


# --- rating CSVs: plain CSV and RaTE-Eval Task 2 --------------------------------------------------
@st.composite
def rating_csv(draw, ref: str, cand: str, score: str, lo: float, hi: float):
    rows = draw(st.lists(st.fixed_dictionaries({
        ref: REPORT, cand: TEXT, score: st.floats(lo, hi, allow_nan=False).map(repr)}), min_size=1, max_size=5))
    extra = draw(st.lists(st.sampled_from(["note", "rater", "id2"]), unique=True, max_size=2))
    for r in rows:
        r.update({c: draw(st.text(CHARS, max_size=8)) for c in extra})
    columns = draw(st.permutations([ref, cand, score, *extra]))
    broken, changed = [dict(r) for r in rows], False
    if draw(st.booleans()):
        k, col = draw(st.integers(0, len(rows) - 1)), draw(st.sampled_from([ref, cand, score]))
        broken[k][col] = draw(st.one_of(st.just(""), st.just("  "), st.text(CHARS, max_size=6), st.just("nan"),
                                        st.just("1e999"), st.just("True")))
        changed = broken[k][col] != rows[k][col]
    if draw(st.booleans()):
        drop = draw(st.sampled_from([ref, cand, score]))
        columns = [c for c in columns if c != drop]
        broken = [{c: v for c, v in r.items() if c != drop} for r in broken]
        changed = True
    return rows, columns, broken, changed, cut_point(draw)


def _check_rated(pairs, rows, broken, changed, truncated, err, ref, cand, score):
    if not changed and not truncated:
        assert err is None
        assert [(p.reference, p.candidate, p.rating) for p in pairs] == [
            (r[ref], r[cand], float(r[score])) for r in rows]
    elif pairs is not None:
        # a file cut inside its last field cannot be told from a shorter field: every other row intact
        for p, r in zip(pairs[:-1] if truncated else pairs, broken):
            assert (p.reference, p.candidate) == (r[ref], r[cand])
        assert truncated or len(pairs) == len(broken)


@examples(60)
@given(rating_csv("reference", "candidate", "rating", -100, 100))
def test_rating_csv(case):
    rows, columns, broken, changed, cut = case
    path = _tmp() / "ratings.csv"
    truncated = write_csv(path, columns, broken, cut)
    pairs, err = outcome(lambda: read_rating_csv(path), RatingFormatError, path)
    _check_rated(pairs, rows, broken, changed, truncated, err, "reference", "candidate", "rating")


@examples(60)
@given(rating_csv("gt_report", "similar_report", "Score", 0, 5))
def test_rate_eval_task2(case):
    rows, columns, broken, changed, cut = case
    root = _tmp()
    (root / "Task2_paragraph_rate").mkdir()
    path = root / "Task2_paragraph_rate" / "rate_test.csv"
    truncated = write_csv(path, columns, broken, cut)
    pairs, err = outcome(lambda: read_rate_eval_task2(root, "test"), RatingFormatError, path)
    _check_rated(pairs, rows, broken, changed, truncated, err, "gt_report", "similar_report", "Score")


# --- RaTE-Eval Task 1 (two JSON text files and a rate CSV) and Task 3 (triads) ----------------------
@st.composite
def task1_folder(draw):
    n = draw(st.integers(1, 4))
    gt, sim = draw(st.lists(TEXT, min_size=n, max_size=n)), draw(st.lists(TEXT, min_size=n, max_size=n))
    rates = draw(st.lists(st.floats(0, 1, allow_nan=False), min_size=n, max_size=n))
    shape = draw(st.sampled_from(["array", "object", "records", "lines"]))
    damage_kind = draw(st.sampled_from([None, None, "count", "rate", "text", "cut"]))
    return gt, sim, rates, shape, damage_kind, draw(ANY), draw(st.integers(0, 200))


def _texts_file(path: Path, texts: list, shape: str) -> None:
    if shape == "array":
        path.write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
    elif shape == "object":
        path.write_text(json.dumps({str(k): t for k, t in enumerate(texts)}, ensure_ascii=False), encoding="utf-8")
    elif shape == "records":
        path.write_text(json.dumps([{"report": t} for t in texts], ensure_ascii=False), encoding="utf-8")
    else:
        path.write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in texts), encoding="utf-8")


@examples(50)
@given(task1_folder())
def test_rate_eval_task1(case):
    gt, sim, rates, shape, damage_kind, value, cut = case
    root = _tmp()
    folder = root / "Task1_sentence_rate"
    folder.mkdir()
    sim_written = list(sim)
    if damage_kind == "count":
        sim_written = sim_written[:-1] or sim_written + ["extra"]
    if damage_kind == "text":
        sim_written[0] = value
    _texts_file(folder / "gt_report_test.json", gt, shape)
    _texts_file(folder / "similar_report_test.json", sim_written, shape)
    rate_rows = [{"rate": repr(r)} for r in rates]
    if damage_kind == "rate":
        rate_rows[-1]["rate"] = str(value)
    truncated = write_csv(folder / "rate_test.csv", ["rate"], rate_rows, cut if damage_kind == "cut" else None)
    pairs, err = outcome(lambda: read_rate_eval_task1(root, "test"), RatingFormatError, folder)
    if damage_kind is None or (damage_kind == "cut" and not truncated):
        assert err is None
        assert [(p.reference, p.candidate, p.rating) for p in pairs] == list(zip(gt, sim, rates))
    elif pairs is not None:
        assert [(p.reference, p.candidate) for p in pairs] == list(zip(gt, sim_written))[:len(pairs)]
        assert len(pairs) == len(gt)


@st.composite
def task3_file(draw):
    triads = draw(st.lists(st.fixed_dictionaries({"original": REPORT, "synonym": TEXT, "opposite": TEXT}),
                           min_size=1, max_size=4))
    broken, changed = draw(st.one_of(st.just((triads, False)), damage(triads, ["original", "synonym", "opposite"])))
    return triads, broken, changed, draw(st.sampled_from(["json", "jsonl"])), cut_point(draw)


@examples(50)
@given(task3_file())
def test_rate_eval_task3(case):
    triads, broken, changed, kind, cut = case
    root = _tmp()
    (root / "Task3_synthetic").mkdir()
    path = root / "Task3_synthetic" / f"triads.{kind}"
    if kind == "json":
        data = json.dumps(broken, ensure_ascii=False).encode("utf-8")
        path.write_bytes(data[:cut] if cut is not None else data)
        truncated = cut is not None and cut < len(data)
    else:
        truncated = write_jsonl(path, broken, False, cut)
    out, err = outcome(lambda: read_rate_eval_task3(root), RatingFormatError, path)
    if not changed and not truncated:
        assert err is None
        assert [(t.original, t.synonym, t.opposite) for t in out] == [
            (x["original"], x["synonym"], x["opposite"]) for x in triads]
    elif out is not None:
        for t, x in zip(out, broken):
            assert (t.original, t.synonym, t.opposite) == (x.get("original"), x.get("synonym"), x.get("opposite"))


# --- ReXVal (two CSVs) ---------------------------------------------------------------------------
@st.composite
def rexval_folder(draw):
    n_studies, types, raters = draw(st.integers(1, 3)), ["radgraph", "bleu"], [0, 1]
    gt_rows = [{"study_id": f"s{k}", "gt_report": draw(REPORT), "radgraph": draw(TEXT), "bleu": draw(TEXT)}
               for k in range(n_studies)]
    err_rows = []
    for study in range(n_studies):
        for ctype in types:
            for rater in raters:
                for category in draw(st.lists(st.integers(1, 6), min_size=1, max_size=2, unique=True)):
                    err_rows.append({"study_number": str(study), "candidate_type": ctype, "rater_index": str(rater),
                                     "error_category": str(category),
                                     "clinically_significant": draw(st.sampled_from(["True", "False"])),
                                     "num_errors": str(draw(st.integers(0, 3)))})
    gt_cols = draw(st.permutations(["study_id", "gt_report", "radgraph", "bleu"]))
    err_cols = draw(st.permutations(list(err_rows[0])))
    kind = draw(st.sampled_from([None, None, "value", "cut", "drop_rows"]))
    return gt_rows, err_rows, gt_cols, err_cols, kind, draw(st.text(CHARS, max_size=6)), draw(st.integers(0, 300))


@examples(50)
@given(rexval_folder())
def test_rexval(case):
    gt_rows, err_rows, gt_cols, err_cols, kind, value, cut = case
    root = _tmp()
    errors_written = [dict(r) for r in err_rows]
    if kind == "value":
        errors_written[0]["num_errors"] = value
    if kind == "drop_rows":  # a truncated long file: the last pair has no row of any rater
        last = (errors_written[-1]["study_number"], errors_written[-1]["candidate_type"])
        errors_written = [r for r in errors_written if (r["study_number"], r["candidate_type"]) != last]
    write_csv(root / "50_samples_gt_and_candidates.csv", gt_cols, gt_rows, None)
    truncated = write_csv(root / "6_valid_raters_per_rater_error_categories.csv", err_cols, errors_written,
                          cut if kind == "cut" else None)
    pairs, err = outcome(lambda: read_rexval(root), RatingFormatError, root)
    expected = {}
    for r in err_rows:
        key = (int(r["study_number"]), r["candidate_type"])
        expected.setdefault(key, {0: 0, 1: 0})[int(r["rater_index"])] += int(r["num_errors"])
    if kind is None or (kind == "value" and value.strip() == errors_written[0]["num_errors"] == err_rows[0]["num_errors"]):
        assert err is None
    if kind == "drop_rows":
        assert err is not None and "no rows" in str(err)
    if pairs is not None:
        columns = [c for c in gt_cols if c in ("radgraph", "bleu")]  # documented: the file's column order
        order = [(s, c) for s in range(len(gt_rows)) for c in columns]
        assert [(p.reference, p.candidate) for p in pairs] == [
            (gt_rows[s]["gt_report"], gt_rows[s][c]) for s, c in order]
        if kind is None or not truncated:
            if kind != "value":
                assert [p.rating for p in pairs] == [sum(expected[k].values()) / 2 for k in order]


# --- RaTE-NER (IOB, JSON array or JSON lines, int or string tags) -------------------------------------
@st.composite
def ratener_file(draw):
    sentences = []
    for _ in range(draw(st.integers(1, 3))):
        n = draw(st.integers(1, 6))
        tokens = draw(st.lists(TEXT, min_size=n, max_size=n))
        tags = draw(st.lists(st.sampled_from(IOB_LABELS), min_size=n, max_size=n))
        sentences.append((tokens, tags))
    as_ints = draw(st.booleans())
    records = [{"tokens": t, "ner_tags": [IOB_LABELS.index(x) for x in g] if as_ints else g} for t, g in sentences]
    kind = draw(st.sampled_from([None, None, "token", "tag", "length", "cut"]))
    return sentences, records, draw(st.sampled_from(["array", "lines"])), kind, draw(ANY), draw(st.integers(0, 300))


@examples(25)
@given(ratener_file())
def test_ratener_iob(case):
    sentences, records, shape, kind, value, cut = case
    root = _tmp()
    (root / "all").mkdir()
    written = [dict(r) for r in records]
    if kind == "token":
        written[0] = {**written[0], "tokens": [value, *written[0]["tokens"][1:]]}
    elif kind == "tag":
        written[0] = {**written[0], "ner_tags": [value, *written[0]["ner_tags"][1:]]}
    elif kind == "length":
        written[-1] = {**written[-1], "ner_tags": written[-1]["ner_tags"] + [10]}
    path = root / "all" / "train_IOB.json"
    if shape == "array":
        data = json.dumps(written, ensure_ascii=False).encode("utf-8")
    else:
        data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in written).encode("utf-8")
    truncated = kind == "cut" and cut < len(data)
    path.write_bytes(data[:cut] if truncated else data)
    out, err = outcome(lambda: load_split(root, "all", "train"), RaTENERFormatError, path)
    if kind is None or (kind == "cut" and not truncated):
        assert err is None
        assert [(s.tokens, s.tags) for s in out] == [(t, g) for t, g in sentences]
    elif out is not None:
        if kind == "length":
            raise AssertionError("a sentence with more tags than tokens was accepted")
        for s, r in zip(out, written):  # whatever was accepted is exactly what the file holds
            assert s.tokens == r["tokens"]
            assert len(s.tags) == len(s.tokens)


# --- the annotation format and the corpus file ---------------------------------------------------------
@st.composite
def annotated_sentence(draw):
    words = draw(st.lists(st.from_regex(r"[A-Za-z]{1,8}|\d{1,2}(\.\d)?", fullmatch=True), min_size=1, max_size=8))
    spans, k = [], 0
    while k < len(words):
        if draw(st.booleans()):
            end = min(len(words) - 1, k + draw(st.integers(0, 2)))
            spans.append((k, end, draw(st.sampled_from(ENTITY_TYPES))))
            k = end + 1
        k += 1
    parts, k = [], 0
    for a, b, t in spans:
        parts += words[k:a] + [f"[{' '.join(words[a:b + 1])}|{t}]"]
        k = b + 1
    parts += words[k:]
    return " ".join(parts) + " .", words, spans


@examples(80)
@given(annotated_sentence(), st.text(CHARS, max_size=40))
def test_annotation_format(case, garbage):
    annotated, words, spans = case
    parsed = parse_annotated(annotated)
    assert list(parsed.words) == words + ["."]
    assert [(e.start, e.end, e.type) for e in parsed.entities] == spans
    assert strip_annotation(annotated) == " ".join(words) + " ."
    try:  # arbitrary text: a parse or the format's own error, nothing else
        parse_annotated(garbage)
    except AnnotationError:
        pass


@examples(40)
@given(st.lists(st.one_of(ANY, st.fixed_dictionaries({
    "id": st.text(max_size=5), "modality": st.sampled_from(["CT", "X-ray", "Ultrasonic"]),
    "anatomy": st.sampled_from(["chest", "head", "brain"]), "style": st.sampled_from(["clinical", "teaching", 3]),
    "findings": st.lists(st.one_of(TEXT, ANY), max_size=2), "impression": st.lists(TEXT, min_size=1, max_size=2)})),
    min_size=1, max_size=4), st.booleans())
def test_corpus_file(records, as_text_lines):
    path = _tmp() / "reports.jsonl"
    path.write_text("".join((json.dumps(r) if not (as_text_lines and isinstance(r, str)) else r) + "\n"
                            for r in records), encoding="utf-8")
    try:
        reports = read_reports(path)
    except AnnotationError as err:
        assert f"{path}:" in str(err), f"the error does not name file:line: {err}"
        return
    assert len(reports) == sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


@st.composite
def span_file(draw):
    docs, expected = [], []
    for d in range(draw(st.integers(1, 2))):
        sentences, ner, offset = [], [], 0
        for _ in range(draw(st.integers(1, 3))):
            words = draw(st.lists(TEXT, min_size=1, max_size=6))
            a = draw(st.integers(0, len(words) - 1))
            b = draw(st.integers(a, len(words) - 1))
            ents = [[offset + a, offset + b, draw(st.sampled_from(ENTITY_TYPES))]] if draw(st.booleans()) else []
            sentences.append(words)
            ner.append(ents)
            expected.append((words, [(a, b, e[2]) for e in ents]))
            offset += len(words)
        docs.append({"doc_key": f"d{d}", "sentences": sentences, "ner": ner})
    kind = draw(st.sampled_from([None, None, "word", "entity", "cut"]))
    return docs, expected, kind, draw(ANY), draw(st.integers(0, 300))


@examples(25)
@given(span_file())
def test_ratener_span(case):
    docs, expected, kind, value, cut = case
    root = _tmp()
    (root / "all").mkdir()
    written = json.loads(json.dumps(docs))
    if kind == "word":
        written[0]["sentences"][0][0] = value
    elif kind == "entity":
        written[0]["ner"][0] = [[value, 0, "ANATOMY"]]
    path = root / "all" / "train_span.json"
    data = "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in written).encode("utf-8")
    truncated = kind == "cut" and cut < len(data)
    path.write_bytes(data[:cut] if truncated else data)
    out, err = outcome(lambda: load_split(root, "all", "train", scheme="span"), RaTENERFormatError, path)
    if kind is None or (kind == "cut" and not truncated):
        assert err is None
        assert [(s.tokens, s.spans) for s in out] == [(w, sorted(e)) for w, e in expected]
    elif out is not None:
        assert kind != "word" or isinstance(value, str)
        assert kind != "entity" or (isinstance(value, int) and not isinstance(value, bool))
        for s, (w, _) in zip(out, expected):
            assert len(s.tokens) == len(w)
