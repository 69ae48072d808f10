"""The default SYNTHETIC sets are byte for byte the ones their fingerprint names.

A set's fingerprint (``data.synth.generate.fingerprint``) names the generator's output version, the
lexicons, the corpus and its split, not the generator's code, so that a faster generator keeps the sets
made before. This test holds the code to it: the default sets of each fingerprint hash to one digest.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from data.synth.generate import FINGERPRINT, OUTPUT_VERSION, corpus_paths, fingerprint

#: {fingerprint of the shipped lexicons and corpus: SHA-256 of the default sets (seed 0, default sizes)}
DIGESTS = {
    "e88c28f1c5aa1ac5": "fda78af2b5293a03e6732234953e946809ef59733bef0e94d153bfdefc744ad5",
}


def sets_digest(folder: Path) -> str:
    """SHA-256 over every file of the sets (relative path and bytes, in path order), but the fingerprint
    record, which holds the fingerprint itself."""
    h = hashlib.sha256()
    for f in sorted(p for p in folder.rglob("*") if p.is_file() and p.name != FINGERPRINT):
        h.update(str(f.relative_to(folder)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def test_the_default_sets_are_the_ones_their_fingerprint_names(default_synthetic):
    value = fingerprint(corpus_paths(None))
    got = sets_digest(default_synthetic)
    assert value in DIGESTS, (
        f"no digest for fingerprint {value}: the lexicons, the corpus or OUTPUT_VERSION changed; check the new "
        f"sets, then record {value!r}: {got!r} here")
    assert got == DIGESTS[value], (
        f"the default sets changed (digest {got}) but not their fingerprint {value}: a change of the "
        f"generator's code changed what it writes. Raise OUTPUT_VERSION (now {OUTPUT_VERSION}) in "
        "data/synth/generate.py, record the new fingerprint's digest here and remake the results that name "
        "the fingerprint")


def test_the_digest_sees_every_byte_but_the_fingerprint_record(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "rows.jsonl").write_text('{"x": 1}\n')
    (tmp_path / FINGERPRINT).write_text('{"fingerprint": "0"}\n')
    before = sets_digest(tmp_path)
    (tmp_path / FINGERPRINT).write_text('{"fingerprint": "1"}\n')
    assert sets_digest(tmp_path) == before
    (tmp_path / "a" / "rows.jsonl").write_text('{"x": 2}\n')
    assert sets_digest(tmp_path) != before


def test_every_kinds_options_have_the_surfaces_it_declares():
    """``planned_edits`` searches first only the kinds that declare the drawn surface
    (``catalog.KIND_SURFACES``): an option of an undeclared surface would change the sets. Drafts of
    sample reports, some edits into each, every kind's options at each step."""
    import random

    from data.annotation import read_reports
    from data.synth.catalog import (ERROR_KINDS, PLANNED_MEANING_KINDS, SURFACE, _meaning_finders_by_kind,
                                    error_options, kind_surfaces, planned_edits)
    from data.synth.draft import Draft
    from data.synth.lexicon import load_lexicon

    lex, rng = load_lexicon(), random.Random(0)
    reports = read_reports(corpus_paths(None)[0])
    pool = [(r.id, sec, s) for r in reports for sec in ("findings", "impression") for s in getattr(r, sec)]
    seen, wrong = {}, []
    for rep in reports[::3]:
        draft, donors = Draft.from_report(rep), rng.sample(pool, 8)
        for _ in range(3):
            options = [(o.kind, o) for o in error_options(draft, lex, donors, ERROR_KINDS, donors)]
            options += [(k, o) for k, f in _meaning_finders_by_kind(PLANNED_MEANING_KINDS, donors) for o in f(draft, lex)]
            for kind, option in options:
                seen.setdefault(kind, set()).add(SURFACE[option.op])
                if SURFACE[option.op] not in kind_surfaces(kind) or option.kind != kind:
                    wrong.append((kind, option.kind, option.op))
            planned_edits(draft, rng, lex, 1, 1, donors, donors)
    assert not wrong, wrong[:5]
    assert set(seen) == set(ERROR_KINDS) | set(PLANNED_MEANING_KINDS)  # every kind was seen at work
    assert seen["remove_comparison"] == {"rewrite", "delete"} and seen["restate"] == {"insert"}
