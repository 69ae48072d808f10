"""radscore's ``"rush"`` splitter (:mod:`radscore.rush`): its parts on small cases, then its
sentences against the released package's own (medspacy's PyRuSH in the released venv, made on
first use by ``benchmarks/scoring/released_package.py``; those tests skip, with the reason, when it cannot
be made) on the sample reports, the synthetic sets and random report-like texts. To keep the
suite's time, the synthetic and random sets are seeded samples of 800 texts here; the benchmark
(``benchmarks/scoring/bench_splitter.py``) and the closing notes report the full sets.

The spaCy tokenizations below were read off spaCy 3.7.5's English tokenizer (the released
package's), and are what :func:`radscore.rush.token_starts` models.
"""

import json
import random

import pytest

from benchmarks.scoring.bench_splitter import compare, run_released_splitter, sample_texts
from benchmarks.scoring.report_texts import report_texts
from radscore import rush
from radscore.text import clean_sentences

SHARE = 0.999  # identical sentence lists on at least this share of the texts of each set
SUBSET = 800  # texts of the synthetic and the random sets compared here


@pytest.fixture(scope="module")
def splitter():
    return rush.RushSplitter()


def _rules(tmp_path, lines: list[str]) -> rush.RuleSet:
    path = tmp_path / "rules.tsv"
    path.write_text("# a comment\n@MaxRepeatLength\t100\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return rush.RuleSet.from_file(path)


def test_rule_syntax_groups_repeats_and_negative_rules(tmp_path):
    positive = ["\\c.\\s+(\\C)\t0\tstbegin", "\\b(\\C\t0\tstbegin", "\\c(.)\\s+\\C\t2\tstend"]
    text = "Lungs clear.   Heart normal. Seen by Dr. Smith."
    marks = _rules(tmp_path, positive).marks(text)
    assert marks["stbegin"] == [(0, 1), (15, 16), (29, 30), (41, 42)]  # the groups: "L", "H", "S", "S"
    assert marks["stend"] == [(11, 12), (27, 28), (39, 40)]  # the "." groups
    assert rush.rush_spans(text, marks["stbegin"], marks["stend"]) == [[0, 12], [15, 28], [29, 40], [41, 47]]
    # a negative (odd-scored) rule's match, met first and as wide, blocks the "." after "Dr"
    marks = _rules(tmp_path, positive + ["Dr(.) \t3\tstend"]).marks(text)
    assert marks["stend"] == [(11, 12), (27, 28)]
    assert rush.rush_spans(text, marks["stbegin"], marks["stend"]) == [[0, 12], [15, 28], [29, 47]]


def test_a_repeat_takes_one_character_or_the_longest_run(tmp_path):
    rules = _rules(tmp_path, ["a\\s+(b\t0\tstbegin"])
    assert rules.marks("a  b")["stbegin"] == [(3, 4)]
    assert rules.marks("a" + " " * 51 + "b")["stbegin"] == [(52, 53)]  # 1 + 50 more spaces
    assert rules.marks("a" + " " * 52 + "b")["stbegin"] == []  # too long a run


def test_white_space_tokens_are_spacys():
    cases = {"a  b": [0, 2, 3], "a\nb": [0, 1, 2], "a \n b": [0, 2, 4], "a\n\nb": [0, 1, 3], " a": [0, 1],
             "  a": [0, 2], "a ": [0], "a  ": [0, 2], "x\xa0y": [0, 1, 2], "a\t b": [0, 1, 3]}
    for text, starts in cases.items():
        assert rush.token_starts(text) == starts, text


@pytest.mark.parametrize("word, tokens", [
    ("recommendation(s):", ["recommendation(s", "):"]),  # "):" is one of spaCy's special cases
    ("(arrow):", ["(", "arrow", "):"]),
    ("___.)", ["_", "_", "_", ".", ")"]),
    ("1.Findings", ["1.Findings"]),
    ("normal.No", ["normal", ".", "No"]),
    ("*Findings", ["*", "Findings"]),
    ("0-F", ["0", "-", "F"]),
    ("a**", ["a", "*", "*"]),
    ("(Dr.)", ["(", "Dr.", ")"]),
    ("atelectasis..", ["atelectasis", ".."]),
    ("3.5cm", ["3.5", "cm"]),
    ("1:):", ["1", ":)", ":"]),
])
def test_words_split_as_spacy_splits_them(word, tokens):
    starts = rush._split_word(word)
    assert [word[a:b] for a, b in zip(starts, starts[1:] + [len(word)])] == tokens


def test_rules_come_from_medspacy_and_the_environment_can_name_them(monkeypatch, tmp_path, splitter):
    source = splitter.source
    assert source.path.is_file() and source.origin in ("installed", "cache", "env")
    if source.origin != "env":
        assert source.medspacy_version
    copy = tmp_path / "rules.tsv"
    copy.write_bytes(source.path.read_bytes())
    monkeypatch.setenv("RADSCORE_RUSH_RULES", str(copy))
    assert rush.rules_file() == rush.RulesSource(copy, None, "env")
    monkeypatch.setenv("RADSCORE_RUSH_RULES", str(tmp_path / "missing.tsv"))
    with pytest.raises(rush.RulesUnavailable, match="is not a file"):
        rush.rules_file()


def test_without_the_rules_the_error_says_what_to_do(monkeypatch, tmp_path):
    monkeypatch.delenv("RADSCORE_RUSH_RULES", raising=False)
    monkeypatch.setenv("RADSCORE_CACHE", str(tmp_path))
    monkeypatch.setattr(rush, "_installed_rules", lambda: None)

    def offline(*args, **kwargs):
        raise OSError("network unreachable")

    monkeypatch.setattr(rush, "_fetch_release_rules", offline)
    with pytest.raises(rush.RulesUnavailable, match="RADSCORE_RUSH_RULES.*splitter='radiology'"):
        rush.rules_file()
    with pytest.raises(rush.RulesUnavailable, match="fetching disabled"):
        rush.rules_file(fetch=False)


def test_edge_texts(splitter):
    assert splitter("") == [] and clean_sentences(splitter("  \n ")) == []
    assert clean_sentences(splitter("ok")) == []  # under 3 characters
    text = "FINDINGS:\n1. Effusion.\n2. Nodule 3.5 cm.\n\nIMPRESSION: Stable."
    assert "".join(splitter(text)) == text  # the sentences cover the text, in order
    with pytest.raises(TypeError):
        splitter(None)


# ---- against the released package (fixture released_python: tests/conftest.py) ------------------
def _synthetic_texts(folder) -> list[str]:
    texts = []
    for manifest in sorted(folder.glob("*/manifest_synthetic.jsonl")):
        for line in manifest.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            texts += [record[k] for k in ("reference", "candidate") if isinstance(record.get(k), str)]
    texts = list(dict.fromkeys(texts))
    return random.Random(0).sample(texts, min(SUBSET, len(texts)))


@pytest.fixture(scope="module")
def released_sentences(released_python, default_synthetic) -> tuple[dict, dict]:
    """({set: its texts}, {text: the released package's sentence list}) of the three sets (the synthetic
    texts from the default sets, tests/conftest.py), split in one run of its venv: its start-up is paid once."""
    sets = {"samples": sample_texts(), "synthetic": _synthetic_texts(default_synthetic),
            "random": report_texts(SUBSET, seed=1)}
    texts = list(dict.fromkeys(t for texts in sets.values() for t in texts))
    return sets, dict(zip(texts, run_released_splitter(texts, python=released_python)["sentences"], strict=True))


@pytest.mark.slow
@pytest.mark.parametrize("which", ["samples", "synthetic", "random"])
def test_sentences_equal_the_released_packages(which, released_sentences, splitter):
    sets, sentences = released_sentences
    texts = sets[which]
    released = [sentences[t] for t in texts]
    result = compare([clean_sentences(splitter(t)) for t in texts], released, texts)
    print(f"{which}: {result['identical']} of {result['texts']} texts have identical sentence lists")
    for d in result["differences"][:5]:
        print(json.dumps(d, ensure_ascii=False))
    assert len(texts) >= 400 and result["identical_share"] >= SHARE


def test_the_automaton_starts_over_past_its_state_cap_with_the_same_sentences(splitter):
    """Memory stays bounded: past ``max_states`` the automaton is rebuilt, sentences unchanged."""
    capped = rush.RushSplitter(rush.RuleSet.from_file(splitter.source.path, max_states=60))
    texts = report_texts(300, seed=7)
    sizes = []
    for text in texts:
        assert capped(text) == splitter(text)
        sizes.append(capped.rules.n_states)
    assert capped.rules.restarts > 0
    assert splitter.rules.n_states > 60  # the uncapped one kept growing on the same texts
    assert max(sizes) < 60 + max(len(t) for t in texts)  # at most one text's new states above the cap


def test_the_soak_benchmark_keeps_the_automaton_within_its_bound(splitter, monkeypatch):
    """benchmarks/scoring/bench_splitter_soak.py on a short run: samples as it goes, and the automaton starts
    over instead of growing (a smaller bound here, so that it must)."""
    from benchmarks.scoring import bench_splitter_soak

    monkeypatch.setattr(rush, "MAX_STATES", 300)
    monkeypatch.setattr(rush.RuleSet, "from_file", classmethod(
        lambda cls, path, max_states=300: cls(rush.read_rules(path), max_states)))
    result = bench_splitter_soak.soak(3000, 1000, batch=100)
    sentences = [s["sentences"] for s in result["samples"]]
    assert sentences == sorted(sentences) and sentences[-1] == result["sentences"] >= 3000
    # the bound is checked when a text starts: one text may take it past the bound before the next
    # one starts over (measured here: 235, 234, 423 states at the three samples)
    assert all(s["automaton_states"] <= 2 * 300 for s in result["samples"])
    assert result["samples"][-1]["restarts"] >= 1 and result["synthetic"] is True
