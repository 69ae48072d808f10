"""Git keeps the history: code comments and docstrings, configs and the READMEs carry no issue
numbers, no dates of events and no session history ("moved here from the README on …"). A config
comment says why a value was chosen; docs/ pages are checked by tests/test_docs_budget.py."""

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE = ("radscore", "data", "train", "benchmarks", "tests", "notebooks")
PATTERNS = {
    "an issue number": re.compile(r"(?<![\w/&'\"])#\d+\b|\bissues? #?\d+\b|\bPR #?\d+\b", re.I),
    "a date": re.compile(r"(?<![\w-])20\d\d-\d\d-\d\d(?![\w-])"),
    "session history": re.compile(r"\bmoved (here )?from\b|\b(earlier|previous|last|this) session\b|"
                                  r"\bsession \d+\b|\bstop \d+\b|\bas of 20\d\d\b", re.I),
}


def findings(text: str, where: str) -> list[str]:
    return [f"{where}: {what}: {m.group(0)!r}" for what, rx in PATTERNS.items() for m in rx.finditer(text)]


def python_prose(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every comment and docstring of a Python file."""
    source = path.read_text(encoding="utf-8")
    out = [(tok.start[0], tok.string) for tok in tokenize.generate_tokens(io.StringIO(source).readline)
           if tok.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source, str(path))):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                out.append((getattr(node, "lineno", 1), doc))
    return out


def repository_findings(root: Path = ROOT) -> list[str]:
    bad = []
    this = Path(__file__).resolve()
    for folder in CODE:
        for path in sorted((root / folder).rglob("*.py")):
            if path.resolve() == this or any(part.startswith(".") for part in path.relative_to(root).parts):
                continue
            for line, text in python_prose(path):
                bad += findings(text, f"{path.relative_to(root)}:{line}")
    texts = [*sorted((root / "configs").rglob("*.yaml")), *sorted((root / "configs").rglob("*.md")), root / "README.md",
             root / "Makefile", *[root / d / "README.md" for d in ("train", "benchmarks")]]
    for path in texts:
        if path.is_file():
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if path.suffix == ".yaml" or path.name == "Makefile":
                    line = line.partition("#")[2]  # comments only
                bad += findings(line, f"{path.relative_to(root)}:{n}")
    return bad


def test_no_issue_numbers_dates_or_session_history():
    bad = repository_findings()
    assert not bad, f"{len(bad)} place(s) carry history that git keeps:\n" + "\n".join(bad[:80])


def test_the_check_finds_each_kind(tmp_path):
    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "m.py").write_text('"""Made in issue #30."""\nX = "#30 in a string is data"  # stop 12\n'
                                             "def f():\n    \"\"\"Measured on 2026-11-28.\"\"\"\n")
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "c.yaml").write_text("a: 1  # moved here from the README\ncolor: '#123'\n")
    (tmp_path / "README.md").write_text("Results file: ratescore_cuda_h100_2026-11-27_x.json\n")
    got = repository_findings(tmp_path)
    assert len(got) == 4 and all(s.split(":")[0] in ("train/m.py", "configs/c.yaml") for s in got), got
