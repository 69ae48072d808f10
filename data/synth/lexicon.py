"""Load and check the YAML lexicons of the synthetic generator (``data/lexicons/*.yaml``).

Each file documents its own rules at its top. :func:`load_lexicon` reads all of them into one
:class:`Lexicon`; a malformed file raises :class:`LexiconError` naming the file and the key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

LEXICON_DIR = Path(__file__).resolve().parents[1] / "lexicons"
FILES = ("synonyms", "location", "severity", "comparisons", "negation", "spelling", "critical")


class LexiconError(ValueError):
    """A lexicon file that does not follow its documented structure."""


@dataclass(frozen=True)
class SynonymGroup:
    terms: tuple[str, ...]
    final: bool = False


@dataclass(frozen=True)
class Cue:
    cue: str
    to: str
    initial: bool = False


@dataclass(frozen=True)
class Lexicon:
    synonyms: tuple[SynonymGroup, ...]
    laterality: tuple[tuple[str, ...], ...]
    position: tuple[tuple[str, ...], ...]
    sites: dict  # anatomy -> tuple of groups; "general" applies to all
    ladders: tuple[tuple[str, ...], ...]
    significant_steps: int
    size_units: tuple[str, ...]
    size_factors: tuple[float, ...]
    size_significant_ratio: float
    comparison_markers: re.Pattern
    add_change: tuple[str, ...]  # clause templates with {prior}
    add_stable: tuple[str, ...]
    modifiers_change: tuple[str, ...]
    modifiers_stable: tuple[str, ...]
    openings: tuple[str, ...]
    priors: tuple[str, ...]  # with {exam}
    exams: dict  # modality -> word; "default"
    remove_clauses: tuple[re.Pattern, ...]
    sentence_markers: re.Pattern
    change_words: re.Pattern
    unnegate: tuple[Cue, ...]
    negate: tuple[Cue, ...]
    negate_prefix: str
    antonyms: tuple[tuple[str, str], ...]
    spelling_min_length: int
    agreement: tuple[tuple[str, str], ...]
    articles: tuple[str, ...]
    critical: re.Pattern  # critical.yaml: finding phrases that weigh most
    incidental: re.Pattern  # findings whose errors weigh least
    devices: re.Pattern  # tubes and lines
    device_status: re.Pattern  # position statements of a tube or line

    def prior_phrases(self, modality: str) -> tuple[str, ...]:
        """The ``priors`` with ``{exam}`` filled in for ``modality``."""
        exam = self.exams.get(modality, self.exams["default"])
        return tuple(p.replace("{exam}", exam) for p in self.priors)

    def site_groups(self, anatomy: str) -> tuple[tuple[str, ...], ...]:
        """Site groups for one corpus anatomy: its own groups, then the general ones."""
        return tuple(self.sites.get(anatomy, ())) + tuple(self.sites.get("general", ()))


def _get(data: dict, key: str, kind, where: str):
    if not isinstance(data, dict) or key not in data:
        raise LexiconError(f"{where}: missing key {key!r}")
    value = data[key]
    if not isinstance(value, kind):
        raise LexiconError(f"{where}: {key!r} must be a {getattr(kind, '__name__', kind)}")
    return value


def _groups(value, where: str, min_len: int = 2) -> tuple[tuple[str, ...], ...]:
    if not isinstance(value, list):
        raise LexiconError(f"{where}: expected a list of groups")
    out = []
    for k, group in enumerate(value):
        if not isinstance(group, list) or len(group) < min_len or not all(
            isinstance(t, str) and t.strip() for t in group
        ):
            raise LexiconError(f"{where}[{k}]: expected a list of at least {min_len} phrases")
        out.append(tuple(group))
    return tuple(out)


def _regex(value, where: str) -> re.Pattern:
    if not isinstance(value, str):
        raise LexiconError(f"{where}: expected a regular expression string")
    try:
        return re.compile(value, re.IGNORECASE)
    except re.error as err:
        raise LexiconError(f"{where}: invalid regular expression ({err})") from None


def _cues(value, where: str) -> tuple[Cue, ...]:
    if not isinstance(value, list):
        raise LexiconError(f"{where}: expected a list of {{cue, to}} items")
    out = []
    for k, item in enumerate(value):
        if not isinstance(item, dict) or not isinstance(item.get("cue"), str) or not isinstance(
            item.get("to"), str
        ):
            raise LexiconError(f"{where}[{k}]: expected {{cue: str, to: str}}")
        out.append(Cue(item["cue"], item["to"], bool(item.get("initial", False))))
    return tuple(sorted(out, key=lambda c: -len(c.cue)))  # longest cue first


def _phrases(value, where: str) -> re.Pattern:
    """A whole-word, case-insensitive pattern matching any phrase of a non-empty list."""
    if not isinstance(value, list) or not value or not all(isinstance(t, str) and t.strip() for t in value):
        raise LexiconError(f"{where}: expected a non-empty list of phrases")
    alternatives = "|".join(re.escape(t) for t in sorted(value, key=lambda t: (-len(t), t)))
    return re.compile(r"(?<![\w-])(?:" + alternatives + r")(?![\w-])", re.IGNORECASE)


def _templates(value: list, where: str) -> tuple[str, ...]:
    if not value or not all(isinstance(t, str) and "{prior}" in t for t in value):
        raise LexiconError(f"{where}: expected phrases that each contain {{prior}}")
    return tuple(value)


def _read(folder: Path, name: str) -> tuple[dict, str]:
    path = folder / f"{name}.yaml"
    if not path.is_file():
        raise LexiconError(f"{path}: lexicon file not found")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise LexiconError(f"{path}: not valid YAML ({err})") from None
    if not isinstance(data, dict):
        raise LexiconError(f"{path}: expected a mapping at the top level")
    return data, str(path)


def _synonyms(data: dict, where: str) -> tuple[SynonymGroup, ...]:
    out = []
    for k, item in enumerate(_get(data, "groups", list, where)):
        if isinstance(item, dict):
            terms = _groups([item.get("terms")], f"{where}: groups[{k}].terms")[0]
            out.append(SynonymGroup(terms, bool(item.get("final", False))))
        else:
            out.append(SynonymGroup(_groups([item], f"{where}: groups[{k}]")[0]))
    return tuple(out)


def load_lexicon(folder: str | Path | None = None) -> Lexicon:
    """Read every lexicon file of ``folder`` (default ``data/lexicons``)."""
    folder = Path(folder) if folder else LEXICON_DIR
    return _load_cached(str(folder.resolve()))


@lru_cache(maxsize=4)
def _load_cached(folder: str) -> Lexicon:
    d = {name: _read(Path(folder), name) for name in FILES}
    syn, w_syn = d["synonyms"]
    loc, w_loc = d["location"]
    sev, w_sev = d["severity"]
    cmp_, w_cmp = d["comparisons"]
    neg, w_neg = d["negation"]
    spl, w_spl = d["spelling"]
    crit, w_crit = d["critical"]
    sites_raw = _get(loc, "sites", dict, w_loc)
    sites = {str(k): _groups(v, f"{w_loc}: sites.{k}") for k, v in sites_raw.items()}
    sizes = _get(sev, "sizes", dict, w_sev)
    factors = tuple(float(f) for f in _get(sizes, "factors", list, f"{w_sev}: sizes"))
    if any(f <= 0 or f == 1.0 for f in factors):
        raise LexiconError(f"{w_sev}: sizes.factors must be positive and different from 1")
    add = _get(cmp_, "add", dict, w_cmp)
    remove = _get(cmp_, "remove", dict, w_cmp)
    mods = _get(add, "modifiers", dict, f"{w_cmp}: add")
    exams = {str(k): str(v) for k, v in _get(add, "exams", dict, f"{w_cmp}: add").items()}
    if "default" not in exams:
        raise LexiconError(f"{w_cmp}: add.exams needs a 'default' entry")
    antonyms = _groups(_get(neg, "antonyms", list, w_neg), f"{w_neg}: antonyms")
    if any(len(a) != 2 for a in antonyms):
        raise LexiconError(f"{w_neg}: antonyms must be [NON-ABNORMALITY text, ABNORMALITY text] pairs")
    agreement = _groups(_get(spl, "agreement", list, w_spl), f"{w_spl}: agreement")
    return Lexicon(
        synonyms=_synonyms(syn, w_syn),
        laterality=_groups(_get(loc, "laterality", list, w_loc), f"{w_loc}: laterality"),
        position=_groups(_get(loc, "position", list, w_loc), f"{w_loc}: position"),
        sites=sites,
        ladders=_groups(_get(sev, "ladders", list, w_sev), f"{w_sev}: ladders"),
        significant_steps=int(_get(sev, "significant_steps", int, w_sev)),
        size_units=tuple(_get(sizes, "units", list, f"{w_sev}: sizes")),
        size_factors=factors,
        size_significant_ratio=float(_get(sizes, "significant_ratio", (int, float), f"{w_sev}: sizes")),
        comparison_markers=_regex(_get(cmp_, "markers", str, w_cmp), f"{w_cmp}: markers"),
        add_change=_templates(_get(add, "change", list, f"{w_cmp}: add"), f"{w_cmp}: add.change"),
        add_stable=_templates(_get(add, "stable", list, f"{w_cmp}: add"), f"{w_cmp}: add.stable"),
        modifiers_change=tuple(_get(mods, "change", list, f"{w_cmp}: add.modifiers")),
        modifiers_stable=tuple(_get(mods, "stable", list, f"{w_cmp}: add.modifiers")),
        openings=_templates(_get(add, "openings", list, f"{w_cmp}: add"), f"{w_cmp}: add.openings"),
        priors=tuple(_get(add, "priors", list, f"{w_cmp}: add")),
        exams=exams,
        remove_clauses=tuple(
            _regex(r, f"{w_cmp}: remove.clauses[{k}]")
            for k, r in enumerate(_get(remove, "clauses", list, f"{w_cmp}: remove"))
        ),
        sentence_markers=_regex(_get(remove, "sentence_markers", str, f"{w_cmp}: remove"),
                                f"{w_cmp}: remove.sentence_markers"),
        change_words=_regex(_get(cmp_, "change_words", str, w_cmp), f"{w_cmp}: change_words"),
        unnegate=_cues(_get(neg, "unnegate", list, w_neg), f"{w_neg}: unnegate"),
        negate=_cues(_get(neg, "negate", list, w_neg), f"{w_neg}: negate"),
        negate_prefix=str(_get(neg, "negate_prefix", str, w_neg)),
        antonyms=tuple((a, b) for a, b in antonyms),
        spelling_min_length=int(_get(spl, "min_length", int, w_spl)),
        agreement=tuple((a, b) for a, b in agreement),
        articles=tuple(_get(spl, "articles", list, w_spl)),
        critical=_phrases(_get(crit, "critical", list, w_crit), f"{w_crit}: critical"),
        incidental=_phrases(_get(crit, "incidental", list, w_crit), f"{w_crit}: incidental"),
        devices=_phrases(_get(crit, "devices", list, w_crit), f"{w_crit}: devices"),
        device_status=_phrases(_get(crit, "device_status", list, w_crit), f"{w_crit}: device_status"),
    )
