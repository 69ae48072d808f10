"""Corpus-level figures and consistency checks of the authored corpus (``data/samples/reports.jsonl``).

- :func:`corpus_figures` / :func:`format_figures`: reports, sentences, entities per type, the
  normal share, the length distribution, the header share, placeholders, modalities, anatomies and
  the sides of the corpus split (``python -m data corpus-stats``, part of ``make stats``).
- :func:`consistency_issues`: what can be checked automatically of "one decision for one phrase"
  (``python -m data validate --consistency``):
  * the same words in the same context (the word before and the word after) typed two ways:
    an observation in one place and a diagnosis or an anatomy in another (the polarity, NON- or
    not, is left out: a negation can sit far from the span, as in "Resolution of the left lower
    lobe [pneumonia|NON-DISEASE]");
  * the same words annotated in one place and left unannotated in the same context elsewhere
    (for example a missed anaphoric "the lesion");
  * an annotation inside a TECHNIQUE or COMPARISON line (the guide leaves them unannotated; they
    are skipped by the two checks above).
  A flagged case that a reviewer decided is right goes, with the reason, into
  ``data/samples/consistency_reviewed.txt`` (:func:`read_reviewed`); the test of the shipped corpus
  fails on a new issue and on a reviewed line that no longer occurs.

Definitions (ours, used in the figures): a report is *normal or near-normal* when its findings and
impression hold at most two ABNORMALITY/DISEASE spans; *long* when it has 12 or more sentences; it *has headers* when a
findings or impression sentence starts with ``FINDINGS:`` or ``IMPRESSION:``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

from data.annotation import Report
from radscore.labels import ENTITY_TYPES

POSITIVE = ("ABNORMALITY", "DISEASE")
HEADERS = ("FINDINGS:", "IMPRESSION:")
UNANNOTATED_LINES = ("TECHNIQUE:", "COMPARISON:")
REVIEWED = Path(__file__).resolve().parent / "samples" / "consistency_reviewed.txt"
NEAR_NORMAL_MAX = 2
LONG_MIN = 12


def n_positive(report: Report) -> int:
    """ABNORMALITY/DISEASE spans of the study's result (findings and impression; the preamble's
    indication states the clinical question, not what the study found)."""
    return sum(1 for s in report.findings + report.impression for e in s.entities if e.type in POSITIVE)


def has_headers(report: Report) -> bool:
    return any(s.text.startswith(HEADERS) for s in report.findings + report.impression)


def corpus_figures(reports: list[Report], split=None) -> dict:
    n = len(reports)
    lengths = Counter(len(r.sentences) for r in reports)
    bins = {"1-3": (1, 3), "4-7": (4, 7), "8-11": (8, 11), "12+": (12, 10 ** 6)}
    return {
        "reports": n,
        "sentences": sum(len(r.sentences) for r in reports),
        "entities": dict(Counter(e.type for r in reports for s in r.sentences for e in s.entities)),
        "normal_or_near_normal": sum(n_positive(r) <= NEAR_NORMAL_MAX for r in reports),
        "entity_free_positive": sum(n_positive(r) == 0 for r in reports),
        "long": sum(len(r.sentences) >= LONG_MIN for r in reports),
        "with_headers": sum(has_headers(r) for r in reports),
        "with_preamble": sum(bool(r.preamble) for r in reports),
        "with_placeholder": sum("___" in r.text() for r in reports),
        "length_bins": {k: sum(v for L, v in lengths.items() if lo <= L <= hi) for k, (lo, hi) in bins.items()},
        "lengths": dict(sorted(lengths.items())),
        "modalities": dict(Counter(r.modality for r in reports).most_common()),
        "anatomies": dict(Counter(r.anatomy for r in reports).most_common()),
        "styles": dict(Counter(r.style for r in reports).most_common()),
        "groups_with_several_reports": sum(1 for v in Counter(r.case for r in reports).values() if v > 1),
        "split": dict(Counter(split.of(r.id) for r in reports)) if split is not None else None,
    }


def format_figures(fig: dict) -> str:
    n = fig["reports"] or 1
    pct = lambda k: f"{fig[k]} ({100 * fig[k] / n:.1f}%)"  # noqa: E731
    ent = ", ".join(f"{t} {fig['entities'].get(t, 0)}" for t in ENTITY_TYPES)
    lines = [
        f"reports {fig['reports']}, sentences {fig['sentences']}, entities {sum(fig['entities'].values())} ({ent})",
        f"normal or near-normal (<= {NEAR_NORMAL_MAX} ABNORMALITY/DISEASE spans): {pct('normal_or_near_normal')}; "
        f"none at all: {pct('entity_free_positive')}",
        f"long (>= {LONG_MIN} sentences): {pct('long')}; sentences per report: "
        + ", ".join(f"{k}: {v}" for k, v in fig["length_bins"].items()),
        f"with section headers: {pct('with_headers')}; with a preamble (INDICATION/TECHNIQUE/COMPARISON): "
        f"{pct('with_preamble')}; with ___ placeholders: {pct('with_placeholder')}",
        f"modalities ({len(fig['modalities'])}): " + ", ".join(f"{k} {v}" for k, v in fig["modalities"].items()),
        f"anatomies ({len(fig['anatomies'])}): " + ", ".join(f"{k} {v}" for k, v in fig["anatomies"].items()),
        "styles: " + ", ".join(f"{k} {v}" for k, v in fig["styles"].items())
        + f"; case groups with several reports: {fig['groups_with_several_reports']}",
    ]
    if fig.get("split"):
        lines.append("corpus split (data/samples/split.json): "
                     + ", ".join(f"{k} {fig['split'].get(k, 0)}" for k in ("train", "dev", "test")))
    return "\n".join(lines)


def _where(report: Report, k: int) -> str:
    n_pre, n_find = len(report.preamble), len(report.findings)
    if k < n_pre:
        return f"{report.id} preamble[{k}]"
    if k < n_pre + n_find:
        return f"{report.id} findings[{k - n_pre}]"
    return f"{report.id} impression[{k - n_pre - n_find}]"


def consistency_issues(reports: list[Report]) -> list[str]:
    """Issues as readable lines (empty when the corpus is consistent); see the module docstring."""
    typed: dict[tuple, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    phrases: dict[tuple, tuple] = {}  # (words, before, after) -> (type, where) of one annotation
    out = []
    for r in reports:
        for k, s in enumerate(r.sentences):
            if s.text.startswith(UNANNOTATED_LINES):
                if s.entities:
                    out.append(f"annotated TECHNIQUE/COMPARISON line in {_where(r, k)}: {s.text[:60]!r}")
                continue
            low = [w.lower() for w in s.words]
            for e in s.entities:
                words = tuple(low[e.start:e.end + 1])
                ctx = (words, low[e.start - 1] if e.start else "^", low[e.end + 1] if e.end + 1 < len(low) else "$")
                typed[ctx][e.type.removeprefix("NON-")].append(_where(r, k))
                phrases.setdefault(ctx, (e.type, _where(r, k)))
    for (words, before, after), types in sorted(typed.items()):
        if len(types) > 1:
            detail = "; ".join(f"{t} in {', '.join(w[:3])}{' …' if len(w) > 3 else ''}" for t, w in sorted(types.items()))
            out.append(f"typed two ways: {' '.join(words)!r} (after {before!r}, before {after!r}): {detail}")
    # unannotated occurrences of an annotated phrase in the same context
    for r in reports:
        for k, s in enumerate(r.sentences):
            if s.text.startswith(UNANNOTATED_LINES):
                continue
            low = [w.lower() for w in s.words]
            tagged = set()
            for e in s.entities:
                tagged.update(range(e.start, e.end + 1))
            for i in range(len(low)):
                if i in tagged:
                    continue
                for j in range(i, min(len(low), i + 6)):
                    if j in tagged:
                        break
                    ctx = (tuple(low[i:j + 1]), low[i - 1] if i else "^", low[j + 1] if j + 1 < len(low) else "$")
                    if ctx in phrases:
                        etype, first = phrases[ctx]
                        out.append(f"annotated in {first} as {etype} but not in {_where(r, k)}: "
                                   f"{' '.join(ctx[0])!r} (after {ctx[1]!r}, before {ctx[2]!r})")
    return out


def read_reviewed(path: str | Path = REVIEWED) -> dict[str, str]:
    """Reviewed exceptions: ``issue line  # reason`` per line (``#`` lines and blanks skipped)."""
    path = Path(path)
    if not path.is_file():
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        issue, sep, reason = line.rpartition("  # ")
        if not sep or not reason.strip():
            raise ValueError(f"{path}: every reviewed line ends with '  # <reason>': {line[:80]!r}")
        out[issue.strip()] = reason.strip()
    return out


def unreviewed_issues(reports: list[Report], reviewed: dict[str, str] | None = None) -> tuple[list[str], list[str]]:
    """(issues not in the reviewed list, reviewed lines that no longer occur)."""
    reviewed = read_reviewed() if reviewed is None else reviewed
    issues = consistency_issues(reports)
    return [i for i in issues if i not in reviewed], sorted(set(reviewed) - set(issues))
