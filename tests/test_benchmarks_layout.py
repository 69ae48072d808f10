"""benchmarks/ in rooms: every benchmarks/ script path or ``benchmarks.`` module that a file of the repository
names exists, no script lies loose in benchmarks/ itself, every folder is a package (``python -m
benchmarks.<room>.<script>``), and benchmarks/README.md has a line for each script."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
ROOMS = ("scoring", "training", "quality")
# modules outside a room, each over every room: make gpu-check (the GPU measurements in one command),
# make results (docs/results.md from every room's JSONs), the one writer of every room's results JSONs
ENTRIES = ("gpu_check.py", "kill_test.py", "report.py", "results_file.py")
TEXT_SUFFIXES = {".py", ".md", ".sh", ".yaml", ".yml", ".toml", ".json", ".txt", ".ipynb", ".cfg"}
SKIP_DIRS = {"checkpoints", "__pycache__", "node_modules"}
# a path as written in prose, a shell line or a string: benchmarks/<room>/<script>.py
SLASHED = re.compile(r"benchmarks/((?:[\w.-]+/)*[\w.-]+\.(?:py|sh))\b")
# a path built in Python: ROOT / "benchmarks" / "scoring" / "bench_ratescore.py"
JOINED = re.compile(r'"benchmarks"((?:\s*/\s*"[\w.-]+")+)')
# a module as run or imported: python -m benchmarks.scoring.bench_ratescore, from benchmarks.scoring import ...
DOTTED = re.compile(r"(?<![\w/.-])benchmarks((?:\.[A-Za-z_]\w*)+)")


def _module_exists(root: Path, dotted: str) -> bool:
    path = root.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _text_files(root: Path):
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).parts
        if any(p.startswith(".") or p in SKIP_DIRS for p in rel[:-1]) or not path.is_file():
            continue
        if path.suffix in TEXT_SUFFIXES or path.name in ("Makefile", "run"):
            yield path


def missing_references(root: Path) -> list[str]:
    """``file:line: path`` for every benchmarks/ script path (or folder built with ``/``) and every
    ``benchmarks.`` module named under ``root`` that does not exist there (data files such as results
    JSONs are not checked)."""
    bad = []
    for path in _text_files(root):
        if path == Path(__file__).resolve():  # its own example of a stale path, below
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            named = [f"benchmarks/{m.group(1)}" for m in SLASHED.finditer(line)]
            named += ["/".join(["benchmarks", *re.findall(r'"([\w.-]+)"', m.group(1))]) for m in JOINED.finditer(line)]
            for ref in named:
                if Path(ref).suffix in ("", ".py", ".sh") and not (root / ref).exists():
                    bad.append(f"{path.relative_to(root)}:{lineno}: {ref}")
            for m in DOTTED.finditer(line):
                if not _module_exists(root, "benchmarks" + m.group(1)):
                    bad.append(f"{path.relative_to(root)}:{lineno}: benchmarks{m.group(1)}")
    return bad


def test_every_benchmarks_path_named_in_the_repository_exists():
    bad = missing_references(ROOT)
    assert not bad, "benchmarks/ paths that do not exist (moved to a room? see benchmarks/README.md):\n" + "\n".join(bad)


def test_a_stale_path_is_caught(tmp_path):
    """The check itself: an old flat path, in prose and built with ``/``, and a module that is not there are
    reported; a room's path and its modules are not."""
    (tmp_path / "benchmarks" / "scoring").mkdir(parents=True)
    (tmp_path / "benchmarks" / "scoring" / "__init__.py").write_text("")
    (tmp_path / "benchmarks" / "scoring" / "bench_ratescore.py").write_text("")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "x.md").write_text("run `benchmarks/scoring/bench_ratescore.py`, not benchmarks/bench_ratescore.py\n"
                                            "`python -m benchmarks.scoring.bench_ratescore`, not benchmarks.scoring.bench_ray\n")
    (tmp_path / "t.py").write_text('A = ROOT / "benchmarks" / "bench_ray.py"\nB = ROOT / "benchmarks" / "scoring"\n'
                                   "from benchmarks.scoring import bench_ratescore\n")
    assert missing_references(tmp_path) == ["docs/x.md:1: benchmarks/bench_ratescore.py",
                                            "docs/x.md:2: benchmarks.scoring.bench_ray", "t.py:1: benchmarks/bench_ray.py"]


def test_scripts_live_in_rooms_and_the_readme_names_each():
    loose = sorted(p.name for p in BENCH.iterdir() if p.is_file() and p.name not in ("README.md", "__init__.py", *ENTRIES))
    assert not loose, f"scripts directly in benchmarks/ (put each in a room: {', '.join(ROOMS)}): {loose}"
    rooms = sorted(p.name for p in BENCH.iterdir() if p.is_dir() and p.name not in ("results", "__pycache__"))
    assert rooms == sorted(ROOMS), f"benchmarks/ rooms {rooms}; benchmarks/README.md and this test name {ROOMS}"
    readme = (BENCH / "README.md").read_text()
    unlisted = [f"{room}/{p.name}" for room in ROOMS for p in sorted((BENCH / room).iterdir())
                if p.suffix in (".py", ".sh") and p.name != "__init__.py" and f"`{p.name}`" not in readme]
    assert not unlisted, f"benchmarks/README.md has no line for: {unlisted}"
    for room in ROOMS:
        assert f"## {room}/" in readme
        assert (BENCH / room / "__init__.py").is_file(), f"benchmarks/{room}/ is not a package"
    assert (BENCH / "__init__.py").is_file()
    for entry in ENTRIES:
        assert f"`benchmarks/{entry}`" in readme, entry
