"""RaTE-Eval readers (Hub ``Angelakeke/RaTE-EVAL``, SPEC §1.10), from a local folder.

Layout: ``<root>/Task1_sentence_rate/{gt_report,similar_report}_{split}.json`` and
``rate_{split}.csv``; ``<root>/Task2_paragraph_rate/rate_{split}.csv``;
``<root>/Task3_synthetic/`` (any ``.csv``, ``.json`` or ``.jsonl`` files). ``root`` may also be
the task folder itself.

Where the published encoding is unknown, all of these are accepted:
- Task 1 text files: a JSON array of strings, a JSON object ``{key: string}`` (key order), an
  array of objects holding the text under one of :data:`TEXT_KEYS`, or JSON lines of those; or
  data.synth's marked form ``{"SYNTHETIC": "<note>", "texts": [...]}`` (the marker travels inside
  the file, so a copied file still says what it is).
  Pair ``i`` is element ``i`` of both files and row ``i`` of the rate CSV (counts must agree).
- Task 1 rating: the first column present among :data:`RATE_COLUMNS`, else ``1 - errors /
  potential`` from columns ``errors``/``num_errors`` and ``potential_errors``/``potential``.
  It must lie in [0, 1].
- Task 2: columns ``gt_report``, ``similar_report`` and ``Score`` (or ``score``, ``rating``);
  the score must lie in [0, 5] (published steps of 0.25; other values are kept as they are).
- Task 3: columns or keys ``original``, ``synonym``, ``opposite`` (aliases in :data:`TRIAD_KEYS`).
Optional ``id`` and ``group`` columns are used when present; otherwise ids are
``<file>:<row>`` and the group is a hash of the reference text. Every problem raises
:class:`RaTEEvalFormatError` naming the file, the row or element, and what was expected.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

from data import ratings
from data.textfile import read_text
from data.ratings import RatedPair, RatingFormatError, Triad, group_of, read_csv_table

TASK1, TASK2, TASK3 = "Task1_sentence_rate", "Task2_paragraph_rate", "Task3_synthetic"
SPLITS = ("train", "test")
TEXT_KEYS = ("report", "text", "sentence", "gt_report", "similar_report")
SYNTHETIC_KEY = "SYNTHETIC"  # data.synth's Task 1 files: {"SYNTHETIC": note, "texts": [...]}
RATE_COLUMNS = ("rate", "rating", "score", "Score")
SCORE_COLUMNS = ("Score", "score", "rating")
TRIAD_KEYS = {
    "original": ("original", "gt_report", "reference", "report"),
    "synonym": ("synonym", "synonym_report", "paraphrase", "positive"),
    "opposite": ("opposite", "opposite_report", "antonym", "negative"),
}


class RaTEEvalFormatError(RatingFormatError):
    """A RaTE-Eval file that does not follow the expected layout."""


text_field = partial(ratings.text_field, error=RaTEEvalFormatError)
number_field = partial(ratings.number_field, error=RaTEEvalFormatError)


def _task_dir(root: str | Path, name: str) -> Path:
    root = Path(root)
    if (root / name).is_dir():
        return root / name
    if root.is_dir() and root.name == name:
        return root
    raise RaTEEvalFormatError(f"{root}: no {name}/ folder (pass the RaTE-Eval root or {name}/)")


def _check_split(split: str) -> None:
    if split not in SPLITS:
        raise RaTEEvalFormatError(f"unknown split {split!r}; expected one of {list(SPLITS)}")


def _table(path: Path, required: list[str]):
    try:
        return read_csv_table(path, required)
    except RatingFormatError as err:
        raise RaTEEvalFormatError(str(err)) from None


def _json_lines(path: Path, text: str) -> list:
    out = []
    for lineno, line in enumerate(text.split("\n"), 1):  # not splitlines(): \x85, \u2028 may sit inside a JSON string
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as err:
            raise RaTEEvalFormatError(
                f"{path}:{lineno}: neither a JSON document nor JSON lines ({err.msg})") from None
    return out


def _json_values(path: Path) -> list:
    """Elements of a JSON array, values of a JSON object, or the objects of JSON lines."""
    if not path.is_file():
        raise RaTEEvalFormatError(f"{path}: file not found")
    text = read_text(path, RaTEEvalFormatError)
    data = None
    if path.suffix != ".jsonl":
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None
    if data is None:
        data = _json_lines(path, text)
    if isinstance(data, str):  # one JSON string: a JSON-lines file of one text
        data = [data]
    if isinstance(data, dict) and SYNTHETIC_KEY in data:
        texts = data.get("texts")
        if not isinstance(texts, list):
            raise RaTEEvalFormatError(f"{path}: a {SYNTHETIC_KEY}-marked file holds its texts as a list under 'texts'")
        return texts
    if isinstance(data, dict):
        return list(data.values())
    if not isinstance(data, list):
        raise RaTEEvalFormatError(f"{path}: expected a JSON array, object or JSON lines")
    return data


def _texts(path: Path) -> list[str]:
    out = []
    for k, item in enumerate(_json_values(path)):
        where = f"{path}: element {k}"
        if isinstance(item, dict):
            key = next((c for c in TEXT_KEYS if c in item), None)
            if key is None:
                raise RaTEEvalFormatError(f"{where}: an object without a text key {list(TEXT_KEYS)}")
            item = item[key]
        out.append(text_field(item, where, "text"))
    if not out:
        raise RaTEEvalFormatError(f"{path}: no texts")
    return out


def _first(columns, names) -> str | None:
    return next((c for c in names if c in columns), None)


def _ids(row: dict, path: Path, k: int, reference: str) -> tuple[str, str]:
    rid = str(row["id"]) if str(row.get("id", "")).strip() else f"{path.name}:{k}"
    group = str(row["group"]) if str(row.get("group", "")).strip() else group_of(reference)
    return rid, group


def read_rate_eval_task1(root: str | Path, split: str = "test") -> list[RatedPair]:
    """Task 1 sentence pairs; ``rating`` = ``1 - errors / potential errors`` (higher is better)."""
    _check_split(split)
    folder = _task_dir(root, TASK1)
    gt = _texts(folder / f"gt_report_{split}.json")
    sim = _texts(folder / f"similar_report_{split}.json")
    rate_path = folder / f"rate_{split}.csv"
    df = _table(rate_path, [])
    if not len(gt) == len(sim) == len(df):
        raise RaTEEvalFormatError(
            f"{folder}: gt_report_{split}.json has {len(gt)} texts, similar_report_{split}.json "
            f"{len(sim)}, rate_{split}.csv {len(df)} rows; pair i is element/row i of each")
    col = _first(df.columns, RATE_COLUMNS)
    err_col = _first(df.columns, ("errors", "num_errors"))
    pot_col = _first(df.columns, ("potential_errors", "potential"))
    if col is None and not (err_col and pot_col):
        raise RaTEEvalFormatError(
            f"{rate_path}: no rating column; expected one of {list(RATE_COLUMNS)} or errors and "
            f"potential_errors columns; found {list(df.columns)}")
    out = []
    for k, row in enumerate(df.to_dict("records")):
        where = f"{rate_path}: row {k} (line {k + 2})"
        if col is not None:
            rating = number_field(row[col], where, col)
        else:
            errors = number_field(row[err_col], where, err_col)
            potential = number_field(row[pot_col], where, pot_col)
            if potential <= 0:
                raise RaTEEvalFormatError(f"{where}: {pot_col} must be > 0, got {potential}")
            rating = 1.0 - errors / potential
        if not 0.0 <= rating <= 1.0:
            raise RaTEEvalFormatError(f"{where}: rating {rating} outside [0, 1]")
        rid, group = _ids(row, rate_path, k, gt[k])
        meta = {c: v for c, v in row.items() if c not in ("id", "group")}
        out.append(RatedPair(rid, gt[k], sim[k], rating, group, {"task": 1, "split": split, **meta}))
    return out


def read_rate_eval_task2(root: str | Path, split: str = "test") -> list[RatedPair]:
    """Task 2 paragraph pairs; ``rating`` = the 0-5 score (higher is better)."""
    _check_split(split)
    path = _task_dir(root, TASK2) / f"rate_{split}.csv"
    df = _table(path, ["gt_report", "similar_report"])
    col = _first(df.columns, SCORE_COLUMNS)
    if col is None:
        raise RaTEEvalFormatError(
            f"{path}: no score column; expected one of {list(SCORE_COLUMNS)}; found {list(df.columns)}")
    out = []
    for k, row in enumerate(df.to_dict("records")):
        where = f"{path}: row {k} (line {k + 2})"
        ref = text_field(row["gt_report"], where, "gt_report")
        cand = text_field(row["similar_report"], where, "similar_report")
        score = number_field(row[col], where, col)
        if not 0.0 <= score <= 5.0:
            raise RaTEEvalFormatError(f"{where}: {col} {score} outside [0, 5]")
        rid, group = _ids(row, path, k, ref)
        meta = {c: v for c, v in row.items()
                if c not in ("gt_report", "similar_report", col, "id", "group")}
        out.append(RatedPair(rid, ref, cand, score, group, {"task": 2, "split": split, **meta}))
    return out


def _triad_records(path: Path) -> list[tuple[str, dict]]:
    if path.suffix == ".csv":
        df = _table(path, [])
        return [(f"{path}: row {k} (line {k + 2})", r) for k, r in enumerate(df.to_dict("records"))]
    out = []
    for k, item in enumerate(_json_values(path)):
        if not isinstance(item, dict):
            raise RaTEEvalFormatError(f"{path}: element {k} is not an object")
        out.append((f"{path}: element {k}", item))
    return out


def read_rate_eval_task3(root: str | Path) -> list[Triad]:
    """Task 3 triads (original, synonym rewrite, opposite rewrite), from every file of the folder."""
    folder = _task_dir(root, TASK3)
    files = sorted(p for p in folder.iterdir() if p.suffix in (".csv", ".json", ".jsonl"))
    if not files:
        raise RaTEEvalFormatError(f"{folder}: no .csv, .json or .jsonl file")
    out = []
    for path in files:
        records = _triad_records(path)
        if not records:
            raise RaTEEvalFormatError(f"{path}: no triads")
        keys = {}
        for role, names in TRIAD_KEYS.items():
            keys[role] = _first(records[0][1].keys(), names)
            if keys[role] is None:
                raise RaTEEvalFormatError(
                    f"{path}: no {role} column; expected one of {list(names)}; found "
                    f"{list(records[0][1].keys())}")
        for where, rec in records:
            texts = {role: text_field(rec.get(key), where, key) for role, key in keys.items()}
            meta = {c: v for c, v in rec.items() if c not in keys.values()}
            out.append(Triad(texts["original"], texts["synonym"], texts["opposite"],
                             {"file": path.name, **meta}))
    return out
