"""The ``"rush"`` sentence splitter: the released RaTEScore package's sentences, without medspacy.

The released package splits reports with medspaCy's PyRuSH component on a blank spaCy English
pipeline (``medspacy.load(medspacy_enable=["medspacy_pyrush", ...])``): RuSH rules (medspaCy's
``resources/en/rush_rules.tsv``) mark sentence begins and ends in the characters, PyRuSH turns
them into character spans, then moves each boundary onto a spaCy token start ("split gaps" mode);
the package strips every sentence and drops those with no word or fewer than 3 characters.
This module reproduces those sentences with its own code, in four steps:

1. :class:`RuleSet` reads the rules file into a character trie and finds every rule match the way
   the RuSH rule engine does (same rule syntax, same order of matches, same choice among
   overlapping matches), but runs a lazily built automaton over the text instead of a recursive
   search from every character: each step is a dictionary look-up once its state has been seen.
2. :func:`rush_spans` turns the surviving begin and end marks into sentence spans, closing the
   gaps between them as RuSH does (``auto_fix_gaps``).
3. spaCy's tokens are modelled where they matter (:func:`token_starts`): white space exactly as
   spaCy's tokenizer makes its tokens, and inside a word only where a span boundary falls (a
   model of the English prefix, suffix, infix and special-case rules; see :func:`_split_word`).
4. :func:`snap_to_tokens` marks sentence starts on those tokens as PyRuSH's split-gaps mode does.

The rules file is not part of radscore (third-party, Apache-2.0): :func:`rules_file` finds it in
an installed medspacy distribution, else in a cache folder, fetching medspacy's release from PyPI
into that folder on first use. ``RADSCORE_RUSH_RULES`` names a rules file to use instead;
``RADSCORE_CACHE`` moves the cache folder (default ``~/.cache/radscore``).

Where it cannot match the released output: when a match overlaps two earlier matches of its
kind, RuSH compares it with whichever one its interval tree returns last, and that tree is a
treap whose shape follows the C library's ``rand()``; the released output then depends on every
text split before in the same process. This module models the tree with all priorities equal
(the most likely shape, no rotation) and is deterministic. And inside words, the token model
covers what the rules can put there, not all of spaCy: contractions ("don't"), URLs and most
non-English special cases are left out, and letters, capitals and symbols of other scripts are
told by Python's Unicode properties rather than spaCy's own character tables.
"""

from __future__ import annotations

import bisect
import csv
import hashlib
import io
import json
import os
import re
import string
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from radscore.atomic import write_bytes_atomic, write_text_atomic

MEDSPACY_VERSION = "1.3.1"  # the medspacy release whose rules are fetched when none is installed
RULES_MEMBER = "resources/en/rush_rules.tsv"  # where medspacy's releases keep the English rules
MAX_REPEAT = 50  # the ``max_repeat`` PyRuSH is built with: extra characters one ``+`` may take
MIN_GAP_SENTENCE = 5  # a gap wider than this becomes a sentence of its own (RuSH ``min_sent_chars``)

_END = ""  # trie key of a node where rules end: never a character of a text
_PUNCT = frozenset(string.punctuation)


# ---- finding the rules file ---------------------------------------------------------------------
class RulesUnavailable(RuntimeError):
    """Neither an installed medspacy, nor the cache, nor PyPI could provide the rules file."""


@dataclass(frozen=True)
class RulesSource:
    path: Path
    medspacy_version: str | None  # None for a file named by RADSCORE_RUSH_RULES
    origin: str  # "env", "installed" or "cache"


def cache_dir() -> Path:
    return Path(os.environ.get("RADSCORE_CACHE") or Path.home() / ".cache" / "radscore") / "rush"


def _installed_rules() -> RulesSource | None:
    """The rules file of an installed medspacy distribution, found without importing medspacy."""
    from importlib import metadata

    try:
        dist = metadata.distribution("medspacy")
    except metadata.PackageNotFoundError:
        return None
    for f in dist.files or ():
        if str(f).replace("\\", "/").endswith(RULES_MEMBER):
            path = Path(dist.locate_file(f))
            if path.is_file():
                return RulesSource(path, dist.version, "installed")
    return None


def _fetch_release_rules(version: str, dest: Path, timeout: float = 60.0) -> None:
    """Download medspacy ``version`` from PyPI (its wheel, else its source archive: 1.3.1 has no
    wheel), check the file's sha256 against PyPI's index, and write its English RuSH rules to
    ``dest``, with a ``.json`` note of where they came from."""
    import tarfile
    import urllib.request

    with urllib.request.urlopen("https://pypi.org/pypi/medspacy/json", timeout=timeout) as r:
        files = json.load(r).get("releases", {}).get(version, [])
    files = sorted(files, key=lambda f: f.get("packagetype") != "bdist_wheel")  # a wheel first
    if not files:
        raise RulesUnavailable(f"PyPI lists no file of medspacy {version}")
    chosen = files[0]
    with urllib.request.urlopen(chosen["url"], timeout=timeout) as r:
        blob = r.read()
    digest = hashlib.sha256(blob).hexdigest()
    if digest != chosen["digests"]["sha256"]:
        raise RulesUnavailable(f"{chosen['filename']}: sha256 {digest} differs from PyPI's {chosen['digests']['sha256']}")
    if chosen["filename"].endswith(".whl"):
        with zipfile.ZipFile(io.BytesIO(blob)) as zf:
            member = next(n for n in zf.namelist() if n.endswith(RULES_MEMBER))
            rules = zf.read(member)
    else:
        with tarfile.open(fileobj=io.BytesIO(blob), mode="r:*") as tf:
            entry = next(m for m in tf.getmembers() if m.name.endswith("/" + RULES_MEMBER))
            member, rules = entry.name, tf.extractfile(entry).read()
    dest.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(dest, rules)
    write_text_atomic(dest.with_suffix(".json"), json.dumps({
        "medspacy": version, "file": chosen["filename"], "file_sha256": digest, "member": member,
        "rules_sha256": hashlib.sha256(rules).hexdigest()}, indent=1))


def rules_file(fetch: bool = True) -> RulesSource:
    """Where the RuSH rules come from: ``RADSCORE_RUSH_RULES``, else an installed medspacy, else
    the cache (filled from PyPI on first use when ``fetch``)."""
    named = os.environ.get("RADSCORE_RUSH_RULES")
    if named:
        if not Path(named).is_file():
            raise RulesUnavailable(f"RADSCORE_RUSH_RULES={named!r} is not a file")
        return RulesSource(Path(named), None, "env")
    found = _installed_rules()
    if found is not None:
        return found
    cached = cache_dir() / f"medspacy-{MEDSPACY_VERSION}" / "rush_rules.tsv"
    if not cached.is_file() and fetch:
        try:
            _fetch_release_rules(MEDSPACY_VERSION, cached)
        except RulesUnavailable:
            raise
        except Exception as err:  # network, HTTP, zip: say what to do
            raise RulesUnavailable(
                f"the 'rush' splitter needs medspaCy's RuSH rules ({RULES_MEMBER} of medspacy "
                f"{MEDSPACY_VERSION}) and could not fetch them from PyPI ({err}). Either install "
                f"medspacy somewhere importlib can see it, put that file at {cached}, or set "
                f"RADSCORE_RUSH_RULES to its path; or choose splitter='radiology'") from err
    if not cached.is_file():
        raise RulesUnavailable(f"no RuSH rules file at {cached} (fetching disabled)")
    return RulesSource(cached, MEDSPACY_VERSION, "cache")


# ---- the rules ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Rule:
    row: int  # line number in the file: RuSH's rule id
    pattern: str
    name: str  # "stbegin" or "stend"
    score: float
    actual: bool  # False for a negative ("pseudo") rule, whose matches only block others


def read_rules(path: str | Path) -> list[Rule]:
    """The rules of a RuSH rules file (tab-separated: pattern, score, name[, type]). Lines whose
    first cell starts with ``#`` or ``@`` are comments and settings. Without a type column in
    any rule, an odd score marks a negative rule."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f, delimiter="\t"))
    cells, typed = [], False
    for number, row in enumerate(rows, start=1):
        if len(row) < 3 or row[0].startswith(("#", "@")):
            continue
        kind = "ACTUAL"
        if len(row) == 4:
            kind, typed = row[3].strip(), True
        cells.append((number, row[0], row[2].strip(), float(row[1].strip()), kind))
    if any("[" in c[1] for c in cells):
        raise ValueError(f"{path}: rules with [..|..] alternatives are not supported")
    return [Rule(n, pat, name, score, kind == "ACTUAL" if typed else score % 2 == 0)
            for n, pat, name, score, kind in cells]


_TESTS: dict[str, Callable[[str], bool]] = {  # what a ``\\x`` wildcard (or its repeat ``\\x+``) accepts
    "s": lambda c: c == " " or c == "\t" or c == "\xa0",
    "n": lambda c: c == "\n" or c == "\r",
    "d": str.isdigit,
    "C": str.isupper,
    "c": str.islower,
    "p": lambda c: c in _PUNCT,
    "a": lambda c: not c.isspace(),
    "u": lambda c: c > "~" and c != "\xa0",
    "w": lambda c: c > "~" or c.isspace(),
}


def _repeat_test(test: tuple[str, str], ch: str) -> bool | None:
    """Does ``ch`` continue a repeat: ``("w", letter)`` after a wildcard, ``("=", char)`` after a
    plain character; None when RuSH has no repeat for that wildcard."""
    kind, what = test
    if kind == "=":
        return ch == what
    t = _TESTS.get(what)
    return None if t is None else bool(t(ch))


_CONSUMING = {**_TESTS, "(": lambda c: c == "(", ")": lambda c: c == ")", "\\": lambda c: c == "\\"}

# ranks of the branches tried at a trie node, in the order the rule engine tries them (wildcards
# first, by their rank in the node); matches are ordered by their start, then by these ranks
_R_OPEN, _R_CLOSE, _R_EMIT, _R_CHAR, _R_ONE, _R_RUN = 1000, 1001, 1002, 1003, 1004, 1005
_R_FINAL = 2000


MAX_STATES = 8000  # automaton states kept before it starts over (our choice; the sample corpus needs ~2,500)


class _Automaton:
    """The lazily built automaton's tables (see :meth:`RuleSet._step`)."""

    __slots__ = ("states", "threads", "rows", "first_rows", "final")

    def __init__(self):
        self.states: dict[frozenset, int] = {}
        self.threads: list[frozenset] = []
        self.rows: list[dict] = []  # per state: class -> (next state's row, events); None -> the state
        self.first_rows: list[dict] = []  # the same for the text's first character
        self.final: dict[int, tuple] = {}  # per state: events at the end of the text


class RuleSet:
    """Compiled RuSH rules: the trie, and the automaton that finds their matches. The automaton
    grows as texts need new states; past ``max_states`` a text starts a new, empty one (a text
    being matched in another thread finishes on the old one), so memory stays bounded."""

    def __init__(self, rules: list[Rule], max_states: int = MAX_STATES):
        self.rules = {r.row: r for r in rules}
        self.nodes: list[dict] = [{}]
        for r in rules:  # the trie, children in first-insertion order
            node = self.nodes[0]
            for ch in r.pattern:
                nxt = node.get(ch)
                if nxt is None:
                    nxt = node[ch] = {}
                    self.nodes.append(nxt)
                node = nxt
            node.setdefault(_END, {})[r.name] = r.row
        self.ids = {id(n): k for k, n in enumerate(self.nodes)}
        self.alphabet = frozenset(ch for r in rules for ch in r.pattern)
        self.names = list(dict.fromkeys(r.name for r in rules))
        self.repeats = any("+" in r.pattern for r in rules)
        # per end node: the names it marks, each with whether its matches survive (RuSH keeps one
        # span object per match and sets its rule to each name's rule in turn: the last one decides)
        self.emits: dict[int, tuple[tuple[str, bool], ...]] = {}
        for k, n in enumerate(self.nodes):
            if _END in n:
                names = tuple(n[_END])
                actual = self.rules[n[_END][names[-1]]].actual
                self.emits[k] = tuple((name, actual) for name in names)
        self._classes: dict[str, str] = {}
        self._by_tests: dict[tuple, str] = {}
        self._table: dict[int, str] = {}  # str.translate table: character -> its class's character
        self._lock = threading.Lock()
        self.max_states, self.restarts = int(max_states), 0
        self._auto = self._new_automaton()

    @classmethod
    def from_file(cls, path: str | Path, max_states: int = MAX_STATES) -> "RuleSet":
        return cls(read_rules(path), max_states)

    # -- the automaton ----------------------------------------------------------------------
    def _new_automaton(self) -> _Automaton:
        auto = _Automaton()
        self._state(auto, frozenset())
        return auto

    @property
    def n_states(self) -> int:
        return len(self._auto.threads)

    @staticmethod
    def _state(auto: _Automaton, threads: frozenset) -> int:
        sid = auto.states.get(threads)
        if sid is None:
            sid = auto.states[threads] = len(auto.threads)
            auto.threads.append(threads)
            auto.rows.append({None: sid})
            auto.first_rows.append({None: sid})
        return sid

    def _classify(self, ch: str) -> str:
        """A key for what the automaton can tell about ``ch``: the character itself when rules
        name it, else the first character seen that answers every wildcard test the same way."""
        key = self._classes.get(ch)
        if key is None:
            if ch in self.alphabet:
                key = ch
            else:
                tests = tuple(bool(t(ch)) for t in _CONSUMING.values())
                key = self._by_tests.setdefault(tests, ch)
            self._classes[ch] = key
            self._table[ord(ch)] = key
        return key

    def _step(self, auto: _Automaton, sid: int, key: str, first: bool) -> tuple[dict, tuple]:
        """Advance state ``sid`` over one character of class ``key``: the next state's row and the
        matches found at that character (offsets relative to its position). A state is the set
        of pending rule-engine calls (trie node, offsets of the match start and of its group, how
        the node was reached, the order of the branches taken); states are made on first use."""
        ch = key
        nxt: list = []
        events: list = []
        threads = list(auto.threads[sid]) + [(0, 0, 0, 0, None, False, " ", ())]  # a new start here
        for th in threads:
            if th[0] == 1:  # a repeat taking characters
                _, node, rs, mb, me, test, count, rank = th
                if _repeat_test(test, ch) and count < MAX_REPEAT:
                    nxt.append((1, node, rs - 1, mb - 1, None if me is None else me - 1, test, count + 1, rank))
                    continue
                th = (0, node, rs, mb, me, False, "+", rank)
            self._visit(th, ch, first, nxt, events)
        nsid = self._state(auto, frozenset(nxt))
        row = auto.first_rows[sid] if first else auto.rows[sid]
        row[key] = result = (auto.rows[nsid], self._distinct(events))
        return result

    def _distinct(self, events: list) -> tuple:
        """``events`` less the matches that repeat an earlier one (in match order) with the same
        names, kinds and span: :meth:`marks` would skip them anyway."""
        first: dict = {}
        for ev in events:
            rs, rank, b, e, k = ev
            key = (self.emits[k], min(b, e), max(b, e))
            if key not in first or (rs, rank) < first[key][:2]:
                first[key] = ev
        return tuple(first.values())

    def _visit(self, call, ch: str, first: bool, nxt: list, events: list) -> None:
        """One node visit at the current position (offset 0), reading ``ch``; zero-width moves
        recurse, moves over ``ch`` go to ``nxt`` (offsets shifted to the next position)."""
        _, k, rs, mb, me, wild, prev, rank = call
        node = self.nodes[k]
        ids = self.ids
        shift = (lambda v: None if v is None else v - 1)
        wc = node.get("\\")
        if wc is not None:
            for j, letter in enumerate(wc):
                if letter == "b":
                    if first:
                        self._visit((0, ids[id(wc["b"])], rs, mb, me, True, "b", rank + (j,)), ch, first, nxt, events)
                    continue
                if letter == "+":  # RuSH reads ``\+`` as a lower-case letter continuing like ``\c``
                    if ch.islower() and "c" in wc:
                        nxt.append((0, ids[id(wc["c"])], rs - 1, mb - 1, shift(me), True, "c", rank + (j,)))
                    continue
                test = _CONSUMING.get(letter)
                if test is not None and test(ch):
                    nxt.append((0, ids[id(wc[letter])], rs - 1, mb - 1, shift(me), True, letter, rank + (j,)))
        if "(" in node and prev != "\\":
            self._visit((0, ids[id(node["("])], rs, 0, me, False, "(", rank + (_R_OPEN,)), ch, first, nxt, events)
        if ")" in node and prev != "\\":
            # a group closed at the text's first character reads as never closed (offset 0)
            self._visit((0, ids[id(node[")"])], rs, mb, None if first else 0, False, ")", rank + (_R_CLOSE,)),
                        ch, first, nxt, events)
        if _END in node:
            events.append((rs, rank + (_R_EMIT,), mb, 0 if me is None else me, k))
        if ch in node and ch != "(" and ch != ")":
            nxt.append((0, ids[id(node[ch])], rs - 1, mb - 1, shift(me), False, ch, rank + (_R_CHAR,)))
        if self.repeats and "+" in node:
            target = ids[id(node["+"])]
            self._visit((0, target, rs, mb, me, False, "+", rank + (_R_ONE,)), ch, first, nxt, events)
            test = ("w", prev) if wild else ("=", prev)
            if _repeat_test(test, ch) is not None:
                if _repeat_test(test, ch) and MAX_REPEAT > 0:
                    nxt.append((1, target, rs - 1, mb - 1, shift(me), test, 1, rank + (_R_RUN,)))
                else:
                    self._visit((0, target, rs, mb, me, False, "+", rank + (_R_RUN,)), ch, first, nxt, events)

    def _final_events(self, auto: _Automaton, sid: int) -> tuple:
        """Matches completed at the end of the text, from the threads of state ``sid``."""
        events: list = []
        for th in auto.threads[sid]:
            if th[0] == 1:
                th = (0, th[1], th[2], th[3], th[4], False, "+", th[7])
            self._visit_end(th, events)
        auto.final[sid] = result = self._distinct(events)
        return result

    def _visit_end(self, call, events: list) -> None:
        _, k, rs, mb, me, wild, prev, rank = call
        node = self.nodes[k]
        ids = self.ids
        wc = node.get("\\")
        if _END in node:
            events.append((rs, rank + (_R_FINAL,), mb, 0 if me is None else me, k))
        elif wc is not None and "e" in wc:
            if _END in wc["e"]:
                events.append((rs, rank + (_R_FINAL + 1,), mb, 0 if me is None else me, ids[id(wc["e"])]))
        elif ")" in node:
            closed = node[")"]
            if _END in closed:
                events.append((rs, rank + (_R_FINAL + 2,), mb, 0, ids[id(closed)]))
            elif "\\" in closed and "e" in closed["\\"]:
                self._visit_end((0, ids[id(closed["\\"])], rs, mb, 0, False, " ", rank + (_R_FINAL + 3,)), events)
        elif "+" in node:
            self._visit_end((0, ids[id(node["+"])], rs, mb, me, wild, prev, rank + (_R_FINAL + 4,)), events)

    def matches(self, text: str) -> list[tuple[int, tuple, int, int, int]]:
        """Every rule match in ``text``, in the rule engine's order: ``(start, rank, begin, end,
        end node)``. A match's span is its group ``(...)`` if it has one, else the whole match."""
        if not text:
            return []
        auto = self._auto
        if len(auto.threads) > self.max_states:
            with self._lock:
                if self._auto is auto:
                    self._auto = self._new_automaton()
                    self.restarts += 1
                auto = self._auto
        keys = text.translate(self._table)  # each character as its class's character
        step = auto.first_rows[0].get(keys[0]) or self._locked_step(auto, 0, self._classify(text[0]), True)
        row, events = step
        ended = [(0, events)] if events else []
        p = 0
        for ch in keys[1:]:  # the hot loop: one dictionary look-up per character
            p += 1
            step = row.get(ch)
            if step is None:
                key = self._classify(text[p])
                step = row.get(key) or self._locked_step(auto, row[None], key, False)
            row, events = step
            if events:
                ended.append((p, events))
        final = auto.final.get(row[None])
        if final is None:
            with self._lock:
                final = self._final_events(auto, row[None])
        ended.append((len(text), final))
        found = [(p + rs, rank, p + b, p + e, k) for p, events in ended for rs, rank, b, e, k in events]
        found.sort(key=lambda m: (m[0], m[1]))
        return found

    def _locked_step(self, auto: _Automaton, sid: int, key: str, first: bool):
        with self._lock:
            return self._step(auto, sid, key, first)

    def marks(self, text: str) -> dict[str, list[tuple[int, int]]]:
        """The spans each rule name keeps after overlapping matches are resolved and negative
        rules' matches removed: ``{"stbegin": [(begin, end), ...], "stend": [...]}``. Sets
        ``self.ambiguous`` to the number of times the choice among overlapped matches followed the
        tree model rather than a rule every run of RuSH obeys (diagnostics)."""
        kept: dict[str, list] = {n: [] for n in self.names}
        trees: dict[str, _Overlaps] = {}
        self.ambiguous = 0
        seen = set()
        for _, _, b, e, k in self.matches(text):
            if b > e:
                b, e = e, b
            for name, actual in self.emits[k]:
                # a match with the same name, span and kind as an earlier one changes nothing
                # (it overlaps that one, which is as wide), unless the tree's choice is ambiguous
                if (name, b, e, actual) in seen:
                    continue
                seen.add((name, b, e, actual))
                span = (b, e, actual)
                spans = kept[name]
                tree = trees.get(name)
                if tree is None:  # the first span of a kind goes in one shorter (RuSH's own quirk)
                    trees[name] = _Overlaps(b, e - 1, 0)
                    spans.append(span)
                    continue
                hits = tree.overlapping(b, e)
                if not hits:
                    tree.add(b, e, len(spans))
                    spans.append(span)
                    continue
                wider = {d for d in hits if e - b > spans[d][1] - spans[d][0]}  # only a wider match replaces
                if not wider:
                    continue
                if len(set(hits)) == 1:
                    hit = hits[0]
                else:  # RuSH compares with one of them, which one depends on its treap's shape
                    self.ambiguous += 1
                    hit = tree.tree.last_overlap(b, e)
                    if hit not in wider:
                        continue
                spans[hit] = span
                tree.remove(b, e)
                tree.add(b, e, hit)
        return {n: [(b, e) for b, e, actual in spans if actual] for n, spans in kept.items()}


class _Overlaps:
    """RuSH's overlap checker for one rule name: the tree below, with a sorted list of its
    intervals in front so that the common cases (no overlap, one overlap) skip the tree walk."""

    __slots__ = ("tree", "items", "widest")

    def __init__(self, start: int, end: int, data: int):
        self.tree = _IntervalTree(start, end, data)
        self.items = [(start, end, data)]
        self.widest = max(0, end - start)

    def add(self, start: int, end: int, data: int) -> None:
        self.tree.add(start, end, data)
        bisect.insort(self.items, (start, end, data))
        self.widest = max(self.widest, end - start)

    def overlapping(self, start: int, stop: int) -> list[int]:
        """The data of every interval that RuSH's tree search would return for ``(start, stop)``."""
        items = self.items
        lo = bisect.bisect_left(items, (start - self.widest - 1,))
        hi = bisect.bisect_right(items, (stop, _BIG))
        return [d for s, e, d in items[lo:hi]
                if not (e <= start or s >= stop) or start == stop == s or s == e == start]

    def remove(self, start: int, end: int) -> None:
        gone = self.tree.remove(start, end)
        if gone is not None:
            self.items.remove(gone)


_BIG = float("inf")


class _IntervalTree:
    """The binary search tree of RuSH's overlap checks, with every node's priority equal (so no
    rotation): lookups return the overlapping interval that a pre-order walk meets last."""

    __slots__ = ("root",)

    def __init__(self, start: int, end: int, data: int):
        self.root = [start, end, data, None, None]  # start, end, data, left, right

    def add(self, start: int, end: int, data: int) -> None:
        node = self.root
        if node is None:
            self.root = [start, end, data, None, None]
            return
        while True:
            side = 4 if start > node[0] else 3
            if node[side] is None:
                node[side] = [start, end, data, None, None]
                return
            node = node[side]

    def last_overlap(self, start: int, stop: int) -> int | None:
        found = None
        stack = [self.root] if self.root is not None else []
        while stack:  # pre-order: node, left subtree, right subtree
            node = stack.pop()
            s, e = node[0], node[1]
            if not (e <= start or s >= stop) or start == stop == s or s == e == start:
                found = node[2]
            if node[4] is not None and not s > stop:
                stack.append(node[4])
            if node[3] is not None:
                stack.append(node[3])
        return found

    def remove(self, start: int, end: int) -> tuple[int, int, int] | None:
        """Remove the node the treap's removal would find for ``(start, end)``; return it."""
        parent, side, node = None, 0, self.root
        while node is not None:
            if node[0] < start or (node[0] == start and node[1] < end):
                parent, side, node = node, 4, node[4]
            elif node[0] > start or node[1] > end:
                parent, side, node = node, 3, node[3]
            else:
                joined = self._join(node[3], node[4])
                if parent is None:
                    self.root = joined
                else:
                    parent[side] = joined
                return node[0], node[1], node[2]
        return None

    @staticmethod
    def _join(a, b):
        # with equal priorities the treap's join takes the right tree's root (its coin compares an
        # integer rand() with 1, which all but never comes out the other way)
        if a is None:
            return b
        if b is None:
            return a
        b[3] = _IntervalTree._join(a, b[3])
        return b


# ---- marks to sentence spans --------------------------------------------------------------------
def _trimmed_gap(text: str, start: int, stop: int) -> list[int] | None:
    """The part of ``text[start:stop]`` from its first non-space character to its last letter,
    digit or closing mark (``. ! ? ) ] "``) after that one, or None if there is none."""
    first = next((i for i in range(start, stop) if not text[i].isspace()), None)
    if first is None:
        return None
    for i in range(stop - 1, first, -1):
        c = text[i]
        if c.isalnum() or c in '.!?)]"':
            return [first, i + 1]
    return None


def _close_gap(out: list, text: str, start: int, stop: int) -> None:
    gap = _trimmed_gap(text, start, stop)
    if gap is None:
        return
    if gap[1] - gap[0] > MIN_GAP_SENTENCE:
        out.append(gap)
    elif out:
        out[-1][1] = gap[1]


def rush_spans(text: str, begins: list[tuple[int, int]], ends: list[tuple[int, int]]) -> list[list[int]]:
    """Sentence spans ``[begin, end]`` from RuSH's begin and end marks (in match order), with the
    gaps between and around them closed as RuSH's ``auto_fix_gaps`` does."""
    out: list[list[int]] = []
    start = stop = 0
    open_ = False
    j = 0
    last_b, last_e = len(begins) - 1, len(ends) - 1
    for i, (b, _) in enumerate(begins):
        if not open_:
            start = b
            if start < stop:
                continue
            open_ = True
        elif b < stop:
            continue
        if out and start > out[-1][1]:
            _close_gap(out, text, out[-1][1], start)
        elif not out and start > 0:
            _close_gap(out, text, 0, start)
        for k in range(j, len(ends)):
            if i < last_b and k < last_e and begins[i + 1][0] < ends[k][0] + 1:
                break
            stop = ends[k][0] + 1
            j = k
            while stop >= 1 and text[stop - 1].isspace():  # (U+00A0 counts as space here too)
                stop -= 1
            if stop < start:
                continue
            if open_:
                out.append([start, stop])
                open_ = False
                if i == last_b or (k < last_e and begins[i + 1][0] > ends[k + 1][1]):
                    continue
                break
            out[-1] = [start, stop]
            open_ = False
    if out:
        head = _trimmed_gap(text, 0, out[0][0])
        if head is not None:
            if out[0][0] <= ends[0][0]:
                out[0][0] = head[0]
            else:
                out.insert(0, head)
        tail = _trimmed_gap(text, out[-1][1], len(text))
        if tail is not None:
            if tail[1] - tail[0] > MIN_GAP_SENTENCE:
                out.append(tail)
            else:
                out[-1][1] = tail[1]
    else:
        whole = _trimmed_gap(text, 0, len(text))
        if whole is not None and whole[1] - whole[0] > MIN_GAP_SENTENCE:
            out.append(whole)
    return out


# ---- spaCy's tokens, where they matter ----------------------------------------------------------
# where spaCy's tokenizer starts a token, words taken whole: a word's first character; a run of
# white space at the text's start; a run of white space after a word, at its first character, or
# at its second when the first is a plain space (that space then trails the word)
_TOKEN_START = re.compile(r"(?<!\S)\S|\A\s|(?<=\S)[^\S ]|(?<=\S )\s")
_WORD = re.compile(r"\S+")


_SPACE_TOKEN = re.compile(r"\A\s|(?<=\S)[^\S ]|(?<=\S )\s")


def inner_token_starts(text: str, cuts) -> list[int]:
    """The token starts spaCy puts inside words (sorted), for the words that hold a position of
    ``cuts`` strictly inside them; other words are single tokens as far as this module cares."""
    n = len(text)
    out: list[int] = []
    done = set()
    for c in cuts:
        if not (0 < c < n) or text[c - 1].isspace() or text[c].isspace():
            continue
        m = _WORD.search(text, text.rfind(" ", 0, c) + 1)
        while m is not None and m.end() <= c:  # the word holding c (other white space than " ")
            m = _WORD.search(text, m.end())
        if m is None or m.start() in done:
            continue
        done.add(m.start())
        out.extend(m.start() + k for k in _split_word(m.group())[1:])
    return sorted(out)


def token_starts(text: str, cuts=()) -> list[int]:
    """Offsets of spaCy's English tokens in ``text``: exact for white space (see ``_TOKEN_START``);
    a word is one token unless a position of ``cuts`` falls strictly inside it, then it is split
    as spaCy would split it (:func:`_split_word`)."""
    return sorted([m.start() for m in _TOKEN_START.finditer(text)] + inner_token_starts(text, cuts))


def snap_to_tokens(text: str, spans: list[list[int]], inner: list[int] = ()) -> list[int]:
    """Offsets of the tokens that start sentences, given RuSH's character spans and the token
    starts inside words (:func:`inner_token_starts`): PyRuSH's split-gaps rule (a span's first
    token; the token after a span's last one; in a gap between spans its first white-space token,
    else its first token; after the last span, every white-space token). Token 0 always starts
    one. The walk goes from token to token only where the rule does something, finding the next
    token with a regular-expression search."""
    if not text:
        return []

    def next_token(x: int) -> int | None:
        m = _TOKEN_START.search(text, x)
        at = m.start() if m else None
        if inner:
            j = bisect.bisect_left(inner, x)
            if j < len(inner) and (at is None or inner[j] < at):
                at = inner[j]
        return at

    count = len(spans)
    marked = {0}
    pos: int | None = 0
    si = 0
    while pos is not None:
        if si < count - 1 and spans[si][1] <= pos < spans[si + 1][0]:  # a gap between spans
            nb = spans[si + 1][0]
            space = _SPACE_TOKEN.search(text, pos, nb)
            marked.add(space.start() if space else pos)
            pos = next_token(nb)
            continue
        while si < count and pos >= spans[si][1]:
            si += 1
        if si >= count:  # after the last span
            marked.update(m.start() for m in _SPACE_TOKEN.finditer(text, pos))
            break
        b, e = spans[si]
        if pos < b:
            pos = next_token(b)
            continue
        if pos == b:
            marked.add(pos)
        pos = next_token(e)  # the token after the span's last one
        if pos is not None:
            marked.add(pos)
    return sorted(marked)


# A model of spaCy's English tokenizer inside one word, for the rare boundary that falls in a word.
# Its rules, as this module reads them: split off prefixes from the front (punctuation, quotes,
# brackets, currency and symbol characters, "..."), then suffixes from the back (the same, plus
# "'s", a "." after a digit, lower-case letter, punctuation or two capitals, a unit or currency
# after a digit), then split the rest at infixes ("..." , a "." between a lower-case letter and a
# capital, "," between letters, a hyphen or ":<>=/" after a letter or digit before a letter,
# "+-*^" between digits). A word listed as a special case (abbreviations such as "Dr." or
# "e.g.", emoticons) stays whole.
_QUOTES = "'\"”“`‘´’‚,„»«「」『』（）〔〕【】《》〈〉⟦⟧"
_PUNCT_CHARS = "…,:;!?¿؟¡()[]{}<>_#*&。？！，、；：～·।،۔؛٪"
_CURRENCY = "$£€¥฿₽﷼₴₠₡₢₣₤₥₦₧₨₩₪₫₭₮₯₰₱₲₳₵₶₷₸₹₺₻₼₾₿"
_PREFIX_CHARS = frozenset("§%=—–" + _PUNCT_CHARS + _QUOTES + _CURRENCY)
_SUFFIX_CHARS = frozenset(_PUNCT_CHARS + _QUOTES + "—–")
_UNITS = sorted("km km² km³ m m² m³ dm dm² dm³ cm cm² cm³ mm mm² mm³ ha µm nm yd in ft kg g mg µg t lb "
                "oz m/s km/h kmh mph hPa Pa mbar mb MB kb KB gb GB tb TB T G M K %".split(), key=len, reverse=True)
# a "." is a suffix after these (besides digits and lower-case letters)
_DOT_AFTER = frozenset("%²-+|" + _PUNCT_CHARS + _QUOTES + "(?:)")
# Words spaCy's English tokenizer keeps whole (its "special cases"), where they can meet a RuSH
# boundary inside a word: emoticons made of ASCII punctuation, and abbreviations with a period.
# (Its contractions, such as "don't", are left out: no rule puts a boundary inside them.)
_SPECIAL_WORDS = frozenset(
    """(-: (-; (: (; (= )-: ): -_- -__- ._. :'( :') :'-( :'-) :( :(( :((( :() :) :)) :))) :* :-( :-((
    :-((( :-) :-)) :-))) :-* :-/ :-> :-] :-| :-} :/ :> :] :| :} ;) ;-) ;_; <.< =( =) =/ =[ =] =| >.< >.>
    >:( @_@ [-: [: [= ]= ^_^ ^__^ ^___^ (-_-) (._.) (^_^) (>_<) (*_*) '' \\")
    Dr. Mr. Mrs. Ms. Mt. St. Jr. Prof. Rev. Gen. Gov. Sen. Rep. Adm. Messrs. Ph.D. vs. v.s. e.g. E.g.
    E.G. i.e. I.e. I.E. a.m. p.m. co. Co. Inc. Ltd. Corp. Bros. Jan. Feb. Mar. Apr. Jun. Jul. Aug. Sep.
    Sept. Oct. Nov. Dec. a. b. c. d. e. f. g. h. i. j. k. l. m. n. o. p. q. r. s. t. u. v. w. x. y. z.
    °C. °F. °K. °c. °f. °k.""".split())


def _is_icon(c: str) -> bool:
    import unicodedata

    return unicodedata.category(c) == "So"


def _prefix_len(s: str) -> int:
    if s.startswith(".."):
        return len(s) - len(s.lstrip("."))
    c = s[0]
    if c in _PREFIX_CHARS or c == "+" and not s[1:2].isdigit() or _is_icon(c):
        return 1
    for cur in ("US$", "C$", "A$"):
        if s.startswith(cur):
            return len(cur)
    return 0


def _suffix_len(s: str) -> int:
    """Length of the suffix spaCy would split off ``s`` (0 for none): the leftmost start of any
    suffix pattern that reaches the end wins."""
    best = len(s)
    n = len(s)
    for i in range(n):  # leftmost start first
        tail, prev = s[i:], s[i - 1] if i else ""
        if (tail.strip(".") == "" and len(tail) >= 2) or tail == "…" or (len(tail) == 1 and (tail in _SUFFIX_CHARS or _is_icon(tail))):
            best = i
        elif tail in ("'s", "'S", "’s", "’S"):
            best = i
        elif tail == "+" and prev.isdigit():
            best = i
        elif tail == "." and (prev.isdigit() or prev.islower() or prev in _DOT_AFTER
                              or (i >= 2 and prev.isupper() and s[i - 2].isupper())
                              or (i >= 2 and s[i - 2] == "°" and prev in "FfCcKk")):
            best = i
        elif prev.isdigit() and (tail in _UNITS or tail in _CURRENCY):
            best = i
        if best == i:
            return n - i
    return 0


def _infix_cuts(s: str) -> list[tuple[int, int]]:
    out = []
    i, n = 0, len(s)
    while i < n:
        c, prev, nxt = s[i], s[i - 1] if i else "", s[i + 1] if i + 1 < n else ""
        size = 0
        if c == "." and nxt == ".":
            size = len(s[i:]) - len(s[i:].lstrip("."))
        elif c == "…" or _is_icon(c):
            size = 1
        elif c in "+-*^" and prev.isdigit() and (nxt.isdigit() or nxt == "-"):
            size = 1
        elif c == "." and (prev.islower() or prev in _QUOTES) and (nxt.isupper() or nxt in _QUOTES):
            size = 1
        elif c == "," and prev.isalpha() and nxt.isalpha():
            size = 1
        elif (prev.isalpha() or prev.isdigit()) and c in "-–—~":
            run = 3 if s.startswith("---", i) else 2 if s.startswith(("--", "——"), i) else 1
            if s[i + run : i + run + 1].isalpha():
                size = run
        elif c in ":<>=/" and (prev.isalpha() or prev.isdigit()) and nxt.isalpha():
            size = 1
        if size:
            out.append((i, i + size))
            i += size
        else:
            i += 1
    return out


def _affix_pieces(word: str, specials: bool = True) -> list[tuple[int, int]]:
    """``word`` cut into tokens by the prefix, suffix and infix rules (and whole special words
    when ``specials``), as ``(start, end)`` pieces."""
    pieces: list[tuple[int, int]] = []
    tails: list[tuple[int, int]] = []
    special = _SPECIAL_WORDS if specials else frozenset()
    a, b = 0, len(word)
    if word in special:
        return [(0, b)]
    while a < b:
        sub = word[a:b]
        if sub in special:
            break
        p = _prefix_len(sub)
        s = _suffix_len(sub)
        if not p and not s:
            break
        if p:
            pieces.append((a, a + p))
            a += p
            if a == b or word[a:b] in special:
                continue
            s = _suffix_len(word[a:b])
        if s:
            tails.append((b - s, b))
            b -= s
    if a < b:
        sub = word[a:b]
        cuts = [] if sub in special else [c for c in _infix_cuts(sub) if c[0] > 0]
        prev = 0
        for x, y in cuts:
            if x > prev:
                pieces.append((a + prev, a + x))
            pieces.append((a + x, a + y))
            prev = y
        if prev < len(sub):
            pieces.append((a + prev, b))
    pieces.extend(reversed(tails))
    return pieces


def _split_word(word: str) -> list[int]:
    """Offsets in ``word`` where spaCy's English tokenizer starts a token (see the rules above),
    after joining back runs of pieces that spell a special word (spaCy's special-case matcher)."""
    pieces = _affix_pieces(word)
    found = []  # (length in pieces, first piece, last piece)
    for i in range(len(pieces)):
        for j in range(i + 1, len(pieces)):
            text = word[pieces[i][0] : pieces[j][1]]
            if text in _SPECIAL_WORDS and [(x - pieces[i][0], y - pieces[i][0]) for x, y in pieces[i : j + 1]] \
                    == _affix_pieces(text, specials=False):
                found.append((j - i + 1, i, j))
    seen: set[int] = set()
    joined = []
    for size, i, j in sorted(found, key=lambda f: (-f[0], f[1])):  # longest first, then leftmost
        if i not in seen and j not in seen:
            joined.append((i, j))
        seen.update(range(i, j + 1))
    inner = {k for i, j in joined for k in range(i + 1, j + 1)}
    return [p[0] for k, p in enumerate(pieces) if k not in inner]


# ---- the splitter -------------------------------------------------------------------------------
class RushSplitter:
    """``text -> sentences`` as the released RaTEScore package's pipeline gives them (``str`` of
    each of spaCy's ``doc.sents``, unstripped; :func:`radscore.text.clean_sentences` applies the
    package's strip-and-drop rule). ``rules``: a :class:`RuleSet`, a rules file, or None for
    :func:`rules_file`."""

    def __init__(self, rules: RuleSet | str | Path | None = None):
        self.source: RulesSource | None = None
        if rules is None:
            self.source = rules_file()
            rules = self.source.path
        self.rules = rules if isinstance(rules, RuleSet) else RuleSet.from_file(rules)
        self.__name__ = "rush"

    def bounds(self, text: str) -> list[int]:
        """Character offsets where spaCy's sentences start (the first is 0), for a non-empty text."""
        marks = self.rules.marks(text)
        spans = rush_spans(text, marks.get("stbegin", []), marks.get("stend", []))
        return snap_to_tokens(text, spans, inner_token_starts(text, [x for s in spans for x in s]))

    def __call__(self, text: str) -> list[str]:
        if not isinstance(text, str):
            raise TypeError(f"expected a string, got {type(text).__name__}")
        if not text:
            return []
        starts = self.bounds(text)
        return [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]
