"""docs/ stays a set of short pages that teach: the hand-written pages (every docs/*.md but the generated
results.md) total at most MAX_WORDS words, every relative link of README.md and docs/*.md reaches a file
(and, for a link into a markdown page, a heading of it), and the hand-written pages carry no issue
numbers, dates of events or "moved here" history (git keeps the history; figures live in results.md)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
GENERATED = {"results.md"}
MAX_WORDS = 12_000

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
HISTORY = {
    "an issue number": re.compile(r"(?<![\w/&])#\d+\b|\bissues? #?\d+", re.I),
    "a date": re.compile(r"\b20\d\d-\d\d-\d\d\b"),
    "a 'moved here' note": re.compile(r"\bmoved here\b", re.I),
}


def hand_written() -> list[Path]:
    return sorted(p for p in DOCS.glob("*.md") if p.name not in GENERATED)


def words(path: Path) -> int:
    """What ``wc -w`` counts: whitespace-separated tokens."""
    return len(path.read_text().split())


def _code_free(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, inline code marks and punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    heads = re.findall(r"^#{1,6} (.+)$", _code_free(page.read_text()), re.M)
    return {slug(h) for h in heads}


def _shown(page: Path) -> str:
    return str(page.relative_to(ROOT)) if page.is_relative_to(ROOT) else page.name


def broken_links(page: Path) -> list[str]:
    bad = []
    for target in LINK.findall(_code_free(page.read_text())):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            bad.append(f"{_shown(page)}: {target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(f"{_shown(page)}: {target} (no heading #{anchor} in {dest.name})")
    return bad


def test_the_hand_written_docs_fit_the_budget():
    pages = hand_written()
    assert pages, "no docs/*.md"
    counts = {p.name: words(p) for p in pages}
    total = sum(counts.values())
    table = "\n".join(f"  {n:<22} {c:>6}" for n, c in sorted(counts.items(), key=lambda x: -x[1]))
    assert total <= MAX_WORDS, (f"docs/ has {total} hand-written words (at most {MAX_WORDS}; {', '.join(GENERATED)} "
                                f"excluded): cut, or move figures to the results page\n{table}")


def test_every_relative_link_resolves():
    bad = [b for page in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))] for b in broken_links(page)]
    assert not bad, "links that lead nowhere:\n" + "\n".join(bad)


def test_the_hand_written_pages_carry_no_history():
    bad = []
    for page in [ROOT / "README.md", *hand_written()]:
        for lineno, line in enumerate(page.read_text().splitlines(), 1):
            for what, pattern in HISTORY.items():
                if m := pattern.search(line):
                    bad.append(f"{page.relative_to(ROOT)}:{lineno}: {what} ({m.group(0)!r})")
    assert not bad, "history belongs to git, figures to docs/results.md:\n" + "\n".join(bad)


def test_the_checks_catch_what_they_are_for(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n## Options that matter\n\n[ok](page.md#options-that-matter) [web](https://x.org) "
                    "[gone](missing.md) [bad anchor](page.md#nowhere)\n```\n[in code](skipped.md)\n```\n")
    assert broken_links(page) == ["page.md: missing.md (no such file)",
                                  "page.md: page.md#nowhere (no heading #nowhere in page.md)"]
    assert slug("## 4. Check the GPU machine: `make gpu-check`".lstrip("# ")) == "4-check-the-gpu-machine-make-gpu-check"
    assert all(HISTORY["an issue number"].search(t) for t in ("see #46", "issue 30", "issues #29"))
    assert not HISTORY["an issue number"].search("results.md#demo and Table 5")
    assert HISTORY["a date"].search("measured on 2026-11-28")
