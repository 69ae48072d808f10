"""ReXVal reader (PhysioNet ``rexval-dataset`` 1.0.0, SPEC §2): report pairs with mean error counts.

Two CSV files, columns chosen by name (other columns, e.g. ``synthetic``, are ignored):
- ``50_samples_gt_and_candidates.csv``: ``study_id``, ``gt_report`` and one column per candidate
  type (ReXVal: ``radgraph``, ``bertscore``, ``s_emb``, ``bleu``); one row per study;
- ``6_valid_raters_per_rater_error_categories.csv`` (long format): ``study_number`` (0-based row
  of the first file), ``candidate_type``, ``rater_index``, ``error_category`` (1-6),
  ``clinically_significant`` (bool), ``num_errors``.

Aggregation (as RadCliQ/ReXVal): sum ``num_errors`` per (study, candidate, rater), only the
clinically significant rows when ``significant_only``; then the mean (or ``"sum"``/``"median"``)
over the raters of the file. A rater with no row for a pair counts 0 errors for it (long files may
leave out zero rows); a pair with no row from any rater is an error, because a missing pair
cannot be told from a truncated file. The rating is an error count: **higher is worse**.

Every problem raises :class:`ReXValFormatError` naming the file, the row (0-based, with its CSV
line) and what was expected.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from data.ratings import RatedPair, RatingFormatError, read_csv_table

GT_FILE = "50_samples_gt_and_candidates.csv"
CANDIDATE_TYPES = ("radgraph", "bertscore", "s_emb", "bleu")  # the candidate columns of GT_FILE
ERRORS_FILE = "6_valid_raters_per_rater_error_categories.csv"
ERROR_COLUMNS = ["study_number", "candidate_type", "rater_index", "error_category",
                 "clinically_significant", "num_errors"]
AGGREGATES = ("mean", "sum", "median")
_TRUE = {"true", "1", "yes", "t", "y", "1.0"}
_FALSE = {"false", "0", "no", "f", "n", "0.0"}


class ReXValFormatError(RatingFormatError):
    """A ReXVal file that does not follow the published layout."""


def _paths(source) -> tuple[Path, Path]:
    if isinstance(source, (tuple, list)):
        if len(source) != 2:
            raise ReXValFormatError(f"expected (gt_and_candidates.csv, error_categories.csv), got {source!r}")
        return Path(source[0]), Path(source[1])
    folder = Path(source)
    if not folder.is_dir():
        raise ReXValFormatError(f"{folder}: not a folder (pass a folder or the two CSV paths)")
    gt, err = folder / GT_FILE, folder / ERRORS_FILE
    for p in (gt, err):
        if not p.is_file():
            raise ReXValFormatError(f"{folder}: missing {p.name}")
    return gt, err


def _int(value: str, where: str, name: str) -> int:
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        raise ReXValFormatError(f"{where}: {name} must be an integer, got {value!r}") from None
    if not number.is_integer():
        raise ReXValFormatError(f"{where}: {name} must be an integer, got {value!r}")
    return int(number)


def _bool(value: str, where: str) -> bool:
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ReXValFormatError(f"{where}: clinically_significant must be a boolean, got {value!r}")


def read_rexval(source, significant_only: bool = False, aggregate: str = "mean",
                candidate_columns: list[str] | None = None) -> list[RatedPair]:
    """ReXVal pairs with their aggregated radiologist error counts as ``rating``.

    ``source``: the dataset folder, or ``(gt_and_candidates_csv, error_categories_csv)``.
    ``candidate_columns``: the candidate columns of the first file (default: its columns that
    are ReXVal candidate types (:data:`CANDIDATE_TYPES`) or ``candidate_type`` values of the error
    file, in the first file's column order).
    Pairs come in study order, then candidate column order. ``id`` is ``"<study_id>:<type>"``,
    ``group`` the study id; ``meta`` holds ``study_number``, ``candidate_type``, ``per_rater``
    totals, ``per_category`` aggregates (1-6), ``n_raters`` and ``significant_only``.
    """
    if aggregate not in AGGREGATES:
        raise ReXValFormatError(f"unknown aggregate {aggregate!r}; expected one of {list(AGGREGATES)}")
    gt_path, err_path = _paths(source)
    try:
        errors = read_csv_table(err_path, ERROR_COLUMNS)
        gt = read_csv_table(gt_path, ["study_id", "gt_report"])
    except RatingFormatError as err:
        raise ReXValFormatError(str(err)) from None

    rows, raters = [], set()
    for k, row in enumerate(errors.to_dict("records")):
        where = f"{err_path}: row {k} (line {k + 2})"
        study = _int(row["study_number"], where, "study_number")
        if not 0 <= study < len(gt):
            raise ReXValFormatError(
                f"{where}: study_number {study} is not a row of {gt_path.name} (0..{len(gt) - 1})")
        category = _int(row["error_category"], where, "error_category")
        if not 1 <= category <= 6:
            raise ReXValFormatError(f"{where}: error_category must be 1-6, got {category}")
        n = _int(row["num_errors"], where, "num_errors")
        if n < 0:
            raise ReXValFormatError(f"{where}: num_errors must be >= 0, got {n}")
        ctype = str(row["candidate_type"]).strip()
        if not ctype:
            raise ReXValFormatError(f"{where}: empty candidate_type")
        rater = _int(row["rater_index"], where, "rater_index")
        rows.append((where, study, ctype, rater, category, _bool(row["clinically_significant"], where), n))
        raters.add(rater)

    types_in_errors = {r[2] for r in rows}
    if candidate_columns is None:
        # ReXVal's own candidate columns always count: a type whose rows are all missing from the
        # error file (a truncated file) is then an error below, never a silently missing pair
        candidate_columns = [c for c in gt.columns if c in types_in_errors or c in CANDIDATE_TYPES]
    unknown = sorted(types_in_errors - set(candidate_columns))
    if unknown:
        raise ReXValFormatError(
            f"{err_path}: candidate_type(s) {unknown} are not candidate columns of {gt_path.name} "
            f"(candidate columns: {list(candidate_columns)}; file columns: {list(gt.columns)})")
    missing = [c for c in candidate_columns if c not in gt.columns]
    if missing:
        raise ReXValFormatError(f"{gt_path}: missing candidate column(s) {missing}")

    seen: dict[tuple, str] = {}
    totals: dict[tuple, dict] = {}
    per_cat: dict[tuple, dict] = {}
    for where, study, ctype, rater, category, significant, n in rows:
        key = (study, ctype, rater, category, significant)
        if key in seen:
            raise ReXValFormatError(f"{where}: duplicate of {seen[key]} (same study, candidate, "
                                    "rater, category and significance)")
        seen[key] = where.split(": ", 1)[1]
        if significant_only and not significant:
            continue
        totals.setdefault((study, ctype), {}).setdefault(rater, 0)
        totals[(study, ctype)][rater] += n
        per_cat.setdefault((study, ctype), {}).setdefault(rater, {c: 0 for c in range(1, 7)})
        per_cat[(study, ctype)][rater][category] += n
    present = {(r[1], r[2]) for r in rows}
    reduce = {"mean": statistics.fmean, "sum": sum, "median": statistics.median}[aggregate]
    rater_list = sorted(raters)
    out = []
    for study, row in enumerate(gt.to_dict("records")):
        where = f"{gt_path}: row {study} (line {study + 2})"
        study_id = str(row["study_id"]).strip()
        reference = str(row["gt_report"])
        if not study_id or not reference.strip():
            raise ReXValFormatError(f"{where}: empty study_id or gt_report")
        for ctype in candidate_columns:
            if (study, ctype) not in present:
                raise ReXValFormatError(
                    f"{err_path}: no rows for study_number {study} ({study_id}), candidate "
                    f"{ctype!r}: every pair of {gt_path.name} needs its raters' rows")
            candidate = str(row[ctype])
            if not candidate.strip():
                raise ReXValFormatError(f"{where}: empty candidate text in column {ctype!r}")
            by_rater = totals.get((study, ctype), {})
            per_rater = [float(by_rater.get(r, 0)) for r in rater_list]
            cats = per_cat.get((study, ctype), {})
            per_category = {c: float(reduce([cats.get(r, {}).get(c, 0) for r in rater_list]))
                            for c in range(1, 7)}
            out.append(RatedPair(
                f"{study_id}:{ctype}", reference, candidate, float(reduce(per_rater)), study_id,
                {"study_number": study, "candidate_type": ctype, "per_rater": per_rater,
                 "raters": rater_list, "per_category": per_category, "n_raters": len(rater_list),
                 "significant_only": significant_only, "aggregate": aggregate},
            ))
    return out
