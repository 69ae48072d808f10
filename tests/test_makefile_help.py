"""``make help``, the Makefile's default goal: one entry per target, written from the ``## `` comment
on its rule line, with every variable its recipe reads and that variable's default.

The Makefile is run only with ``help`` (and with no goal), on a copy in a temporary folder: no other
target runs, and the check that no ``.venv`` appears there shows that the help installs nothing."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAKEFILE = ROOT / "Makefile"
BUILTIN = {"MAKE", "MAKEFILE_LIST"}  # make's own variables, not the user's

needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="GNU make is not installed")


def _rules(text: str) -> dict[str, dict]:
    """Every rule of the Makefile: target -> {"prereqs", "recipe"} (recipe lines, tabs stripped).
    Target-specific variable lines (``target: VAR ?= value``) are not rules."""
    rules: dict[str, dict] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("\t") and current is not None:
            current["recipe"].append(line[1:])
            continue
        current = None
        m = re.match(r"^([^\s:#=][^:#=]*?)\s*:(?![:=])(.*)$", line)
        if not m or re.match(r"^\s*[A-Za-z_]+\s*[?:+]?=", m.group(2)):
            continue
        target, rest = m.group(1), m.group(2).split("#", 1)[0]
        if target.startswith("."):
            continue  # .PHONY and other special targets
        current = rules.setdefault(target, {"prereqs": rest.split(), "recipe": []})
    return rules


def _phony(text: str) -> set[str]:
    return {t for line in text.splitlines() if line.startswith(".PHONY:") for t in line.split(":", 1)[1].split()}


def _defaults(text: str) -> tuple[dict[str, str], dict[str, dict[str, str]], set[str]]:
    """(global ``VAR ?= value`` defaults, per-target ``target: VAR ?= value`` defaults, the names
    the Makefile sets with ``:=``, which are internal)."""
    glob, per_target, internal = {}, {}, set()
    for line in text.splitlines():
        if m := re.match(r"^([A-Z_][A-Z0-9_]*)\s*\?=\s*(.*?)\s*$", line):
            glob[m.group(1)] = m.group(2)
        elif m := re.match(r"^([a-z][a-z0-9-]*)\s*:\s*([A-Z_][A-Z0-9_]*)\s*\?=\s*(.*?)\s*$", line):
            per_target.setdefault(m.group(1), {})[m.group(2)] = m.group(3)
        elif m := re.match(r"^(?:export\s+)?([A-Z_][A-Z0-9_]*)\s*:=", line):
            internal.add(m.group(1))
    return glob, per_target, internal


def named_targets(text: str) -> list[str]:
    """The targets a user types (rules whose target is a name, not a file made from a variable)."""
    return [t for t in _rules(text) if re.fullmatch(r"[a-z][a-z0-9-]*", t)]


def target_variables(text: str, target: str) -> dict[str, str | None]:
    """The user's variables ``target``'s recipe reads (and the recipe of a file prerequisite named by a
    variable, as ``install``'s ``$(STAMP)``), each with its default (None: none)."""
    rules = _rules(text)
    glob, per_target, internal = _defaults(text)
    recipe = list(rules[target]["recipe"])
    for prereq in rules[target]["prereqs"]:
        if prereq.startswith("$(") and prereq in rules:
            recipe += rules[prereq]["recipe"]
    body = "\n".join(recipe)
    out = {}
    for name in re.findall(r"\$\(([A-Z_][A-Z0-9_]*)\)", body):
        if name in internal or name in BUILTIN:
            continue
        default = per_target.get(target, {}).get(name, glob.get(name))
        if m := re.search(r"\$\(or \$\(" + name + r"\),([^)]*)\)", body):
            default = m.group(1)
        out[name] = default
    return out


def help_entries(output: str) -> dict[str, str]:
    """``make help``'s output as target -> its entry (the description line and the variables line)."""
    entries: dict[str, str] = {}
    last = None
    for line in output.splitlines():
        if m := re.match(r"^  (\S+)\s+(.*)$", line):
            last = m.group(1)
            entries[last] = m.group(2)
        elif line.startswith("   ") and last is not None:
            entries[last] += "\n" + line.strip()
    return entries


def problems(text: str, output: str) -> list[str]:
    """What ``make help``'s output (``output``) misses of the Makefile (``text``); empty when complete."""
    out = []
    targets = named_targets(text)
    phony = _phony(text)
    entries = help_entries(output)
    out += [f"{t}: a rule not declared .PHONY" for t in targets if t not in phony]
    out += [f"{t}: declared .PHONY but has no rule" for t in sorted(phony - set(targets))]
    out += [f"{t}: listed by make help but not a target" for t in entries if t not in targets]
    for t in sorted(phony | set(targets)):
        if t not in entries:
            out.append(f"{t}: not in make help (add a `## description` on its rule line)")
            continue
        if t not in _rules(text):
            continue
        for name, default in target_variables(text, t).items():
            shown = [f"{name}={default}", f'{name}="{default}"'] if default is not None else [f"{name}="]
            if not any(s in entries[t] for s in shown):
                out.append(f"{t}: make help does not show {shown[0]} (its recipe reads $({name}))")
    return out


def run_make(makefile_text: str, folder: Path, *goals: str) -> str:
    """``make -s [goals]`` on ``makefile_text`` in ``folder`` (a temporary copy; no pyproject.toml there)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Makefile").write_text(makefile_text)
    done = subprocess.run(["make", "-s", "-f", "Makefile", *goals], cwd=folder, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, f"make {' '.join(goals)} failed: {done.stderr}"
    assert not (folder / ".venv").exists(), f"make {' '.join(goals) or '(no goal)'} created .venv"
    return done.stdout


def test_help_has_no_prerequisites():
    rules = _rules(MAKEFILE.read_text())
    assert "help" in rules, "the Makefile has no help target"
    assert rules["help"]["prereqs"] == [], f"help depends on {rules['help']['prereqs']}: it must install nothing"


@needs_make
def test_plain_make_prints_the_help_and_every_target_is_listed(tmp_path):
    text = MAKEFILE.read_text()
    output = run_make(text, tmp_path, "help")
    assert run_make(text, tmp_path) == output, "plain `make` does not print the same as `make help`"
    assert problems(text, output) == []
    # every rule the Makefile runs a user would type, .PHONY or not, has its entry
    assert set(help_entries(output)) == set(named_targets(text)) == _phony(text)


@needs_make
def test_the_check_fails_when_the_help_misses_something(tmp_path):
    """Each way the help could go stale is caught: a target without its comment, a new target, a
    variable left out, a default changed in one place only."""
    text = MAKEFILE.read_text()
    bench = re.search(r"^bench:[^\n]*## [^\n]*$", text, re.M).group(0)
    no_comment = text.replace(bench, bench.split(" ##")[0])
    assert "bench: not in make help (add a `## description` on its rule line)" in problems(
        no_comment, run_make(no_comment, tmp_path / "a", "help"))

    extra = text.replace(".PHONY: ", ".PHONY: clean ") + "\nclean:\n\trm -rf checkpoints/tmp\n"
    assert any(p.startswith("clean: not in make help") for p in problems(extra, run_make(extra, tmp_path / "b", "help")))

    tune = re.search(r"^tune-weights:[^\n]*## [^\n]*$", text, re.M).group(0)
    no_var = text.replace(tune, tune.split(" | ")[0])
    assert "tune-weights: make help does not show TUNE_ARGS= (its recipe reads $(TUNE_ARGS))" in problems(
        no_var, run_make(no_var, tmp_path / "c", "help"))

    workers = re.search(r"^TEST_WORKERS \?= (\S+)$", text, re.M)
    changed = text.replace(workers.group(0), f"TEST_WORKERS ?= {int(workers.group(1)) + 1}")
    assert any(p.startswith("test: make help does not show TEST_WORKERS=") for p in problems(
        changed, run_make(changed, tmp_path / "d", "help")))


def test_the_makefile_parser_reads_recipes_and_defaults():
    """A hand-written Makefile (not the project's): rules, target-specific defaults, ``$(or ...)``."""
    text = ("PY := python\nN ?= 2\n.PHONY: a b\n"
            "b: X ?= one\nb: a ## b\n\t$(PY) $(X) $(or $(Y),dflt) $(N) $(Z)\n"
            "a: ## a\n\t$(MAKE) b\n")
    assert named_targets(text) == ["b", "a"]
    assert target_variables(text, "b") == {"X": "one", "Y": "dflt", "N": "2", "Z": None}
    assert target_variables(text, "a") == {}
