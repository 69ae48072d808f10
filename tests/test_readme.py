"""README.md is the front door: short, every command in it exists, and every figure it
quotes comes from a committed result.

Rules checked here:

- length: at most 1,000 words before the ``## Links`` section (a word: a whitespace-separated token
  with a letter or digit in it; table rules and pipes are not words);
- commands: every line of a ``bash`` code block, and every inline ``code`` span that starts with
  ``make``, ``radscore``, ``python -m`` or ``.venv/bin/python``, names something that exists: a
  Makefile target, a ``python -m train`` command (``train.__main__.COMMANDS`` or one of LightningCLI's
  subcommands ``fit``, ``validate``, ``test``, ``predict``), a ``python -m data`` subcommand, a
  ``python -m benchmarks.<module>`` whose file exists, a ``radscore`` CLI subcommand, or a script path in
  the repository;
- figures: a figure is a number written with a decimal point outside code blocks (``0.431``,
  ``16.2``; integers are counts, seeds, dates and sizes). Each must equal, at the digits quoted
  (half a unit of the last digit), some number in a committed ``benchmarks/results/*.json``, or be
  listed in :data:`NOT_FROM_RESULTS` with the file that states it (which must contain it too); a
  timing in minutes must be listed there (no results JSON keeps minutes);
- the results table: each of its cells is read from the JSON entry it is said to come from.
"""

import json
import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
RESULTS = ROOT / "benchmarks" / "results"
MAX_WORDS = 1000

# Figures the README quotes that are not results of a benchmark script (version numbers), with the file
# that states them. Timings with a decimal point would have to be listed here too.
NOT_FROM_RESULTS = {
    "3.10": "pyproject.toml",    # requires-python
}
# `python -m train` subcommands that LightningCLI provides besides train.__main__.COMMANDS
LIGHTNING_SUBCOMMANDS = {"fit", "validate", "test", "predict"}

FIGURE = re.compile(r"(?<![\w.\-/])[-−]?\d+\.\d+(?![\w.])")
COMMAND_PREFIXES = ("make", "radscore ", "python -m ", ".venv/bin/python ")


def _readme() -> str:
    return README.read_text()


def _fenced(text: str) -> list[tuple[str, str]]:
    """(language, body) of every fenced code block."""
    return re.findall(r"^```(\w*)\n(.*?)^```", text, re.S | re.M)


def _prose(text: str) -> str:
    return re.sub(r"^```\w*\n.*?^```", "", text, flags=re.S | re.M)


def _words_before_links(text: str) -> int:
    head = text.split("\n## Links", 1)[0]
    return sum(1 for token in head.split() if re.search(r"\w", token))


def test_the_readme_is_short():
    assert "\n## Links" in _readme(), "README.md keeps its links in a `## Links` section"
    n = _words_before_links(_readme())
    assert n <= MAX_WORDS, f"README.md has {n} words before its links section (at most {MAX_WORDS}): move detail to docs/"


# ---- commands ---------------------------------------------------------------------------------------
def make_targets() -> set[str]:
    return set(re.findall(r"^([a-z][a-z-]*):", (ROOT / "Makefile").read_text(), re.M))


def subcommands(module_file: str) -> set[str]:
    return set(re.findall(r"add_parser\(\s*\"([\w-]+)\"", (ROOT / module_file).read_text()))


def train_commands() -> set[str]:
    from train.__main__ import COMMANDS, TRAINING

    assert set(TRAINING) == LIGHTNING_SUBCOMMANDS
    return set(COMMANDS) | LIGHTNING_SUBCOMMANDS


def readme_commands(text: str) -> list[str]:
    """Every command the README shows: bash code-block lines (comments and continuations joined)
    and inline code spans that start like a command."""
    found = []
    for lang, body in _fenced(text):
        if lang not in ("bash", "sh", "shell", ""):
            continue
        for line in body.replace("\\\n", " ").splitlines():
            line = line.split(" #", 1)[0].strip()
            if line and not line.startswith("#"):
                found.append(line)
    found += [span for span in re.findall(r"`([^`\n]+)`", _prose(text))
              if span == "make" or span.startswith(COMMAND_PREFIXES)]
    return found


def command_problem(command: str, targets: set[str], train: set[str], data: set[str], cli: set[str]) -> str | None:
    """Why ``command`` names nothing that exists (None when it does)."""
    words = shlex.split(command)
    if words[0] == "make":
        named = [w for w in words[1:] if "=" not in w and not w.startswith("-")]
        missing = [w for w in named if w not in targets]
        return f"no Makefile target {missing}" if missing else None
    if words[0] == "radscore":
        return None if len(words) > 1 and words[1] in cli else f"no radscore subcommand {words[1:2]}"
    if words[0].endswith("python") and words[1:2] == ["-m"]:
        module, sub = words[2], (words[3] if len(words) > 3 else None)
        if module.startswith("benchmarks."):
            path = ROOT / (module.replace(".", "/") + ".py")
            return None if path.is_file() else f"no module {module} ({path.relative_to(ROOT)})"
        known = {"train": train, "data": data}.get(module)
        if known is None:
            return f"python -m {module}: not a project command"
        return None if sub in known else f"no `python -m {module} {sub}`"
    if words[0].endswith("python"):
        return None if (ROOT / words[1]).is_file() else f"no script {words[1]}"
    return f"not a command this test knows: {words[0]}"


def test_every_command_in_the_readme_exists():
    targets, train, data, cli = make_targets(), train_commands(), subcommands("data/cli.py"), subcommands("radscore/cli.py")
    commands = readme_commands(_readme())
    assert {"make demo", "make test"} <= set(commands)
    bad = [f"{c!r}: {why}" for c in commands if (why := command_problem(c, targets, train, data, cli))]
    assert not bad, "README.md commands that do not exist:\n" + "\n".join(bad)


def test_the_interface_commands_are_known():
    targets, train, data, cli = make_targets(), train_commands(), subcommands("data/cli.py"), subcommands("radscore/cli.py")
    for ok in ("python -m train fit --config configs/ner/iob_sample.yaml", "python -m benchmarks.report --check"):
        assert command_problem(ok, targets, train, data, cli) is None, ok


def test_a_command_that_does_not_exist_is_caught():
    targets, train, data, cli = make_targets(), train_commands(), subcommands("data/cli.py"), subcommands("radscore/cli.py")
    text = ("```bash\nmake demo\nmake train-everything   # no such target\npython -m train fly\n"
            "python -m benchmarks" ".quality.no_such_bench\n"
            ".venv/bin/python scripts/no_such_script.py\n```\nthen `radscore grade` and `python -m data synth`\n")
    problems = [command_problem(c, targets, train, data, cli) for c in readme_commands(text)]
    assert problems[0] is None and problems[-1] is None
    assert all(problems[1:-1]), problems


# ---- figures ----------------------------------------------------------------------------------------
def _numbers(node):
    if isinstance(node, bool):
        return
    if isinstance(node, (int, float)):
        yield float(node)
    elif isinstance(node, dict):
        for v in node.values():
            yield from _numbers(v)
    elif isinstance(node, list):
        for v in node:
            yield from _numbers(v)


def result_numbers(folder: Path = RESULTS) -> list[float]:
    return sorted({x for path in folder.glob("*.json") for x in _numbers(json.loads(path.read_text()))})


def quoted_figures(text: str) -> list[str]:
    """The figures of ``text``: outside code blocks and inline code (paths, options, snippets)."""
    prose = re.sub(r"`[^`\n]*`", "", _prose(text))
    return [m.group(0).replace("−", "-") for m in FIGURE.finditer(prose)]


def timings(text: str) -> set[str]:
    """Figures followed by a unit of minutes (``10.0 minutes``, ``16.2 min``)."""
    return {f.replace("−", "-") for f in re.findall(r"([-−]?\d+\.\d+)\**\s*min", _prose(text))}


def matches(figure: str, numbers: list[float]) -> bool:
    """``figure`` equals some number at its quoted digits (within half a unit of its last digit)."""
    digits = len(figure.split(".")[1])
    q, tol = float(figure), 0.5 * 10 ** -digits + 1e-12
    return any(abs(x - q) <= tol for x in numbers)


def test_every_figure_in_the_readme_comes_from_a_committed_result():
    numbers = result_numbers()
    bad = []
    for figure in quoted_figures(_readme()):
        if figure in NOT_FROM_RESULTS:
            source = NOT_FROM_RESULTS[figure]
            if figure not in (ROOT / source).read_text():
                bad.append(f"{figure}: listed as stated in {source}, which does not say it")
        elif figure in timings(_readme()):
            bad.append(f"{figure} minutes: a timing, which results JSONs keep in seconds: list it in NOT_FROM_RESULTS "
                       "with the doc that states it")
        elif not matches(figure, numbers):
            bad.append(f"{figure}: in no benchmarks/results/*.json at the digits quoted")
    assert not bad, "README.md figures without a producer:\n" + "\n".join(bad)


def test_a_figure_without_a_result_is_caught():
    assert quoted_figures("Kendall 0.431, −0.109; not `0.999` nor 0.6.0 or v2.5x\n```\n1.234\n```\n") == ["0.431", "-0.109"]
    assert matches("0.431", [0.43070]) and matches("0.43", [0.43070]) and matches("-0.109", [-0.10912])
    assert not matches("0.432", [0.43070]) and not matches("0.4306", [0.43070])
    assert not matches("123456.7", result_numbers())
    assert timings("took **10.0 minutes**, then 3.5 min; Kendall 0.431") == {"10.0", "3.5"}


# ---- the results table ------------------------------------------------------------------------------
def _get(path: str, key: str):
    node = json.loads((RESULTS / path).read_text())
    for part in key.split("/"):
        node = node[part]
    return node


# row label (its start) -> (learned cells, shallow learner, BLEU-4), each as (JSON file, key path)
TABLE = {
    "RaTEScore, tuned W": ([("learned_vs_shallow.json", "ratescore_tuned/sampler_seed 0/test/kendall")],
                           ("learned_vs_shallow.json", "ratescore_tuned/sampler_seed 0/shallow_test/kendall"),
                           ("synth_baselines.json", "runs/0/task2_test/bleu4")),
    "ER²Score (pair accuracy": ([("learned_vs_shallow.json", f"er2score/{s}/test/pair_accuracy") for s in (42, 43)],
                                ("learned_vs_shallow.json", "er2score/42/shallow_test/pair_accuracy"),
                                ("synth_baselines.json", "runs/0/er2_radcliq_test_pair_accuracy/bleu4")),
    "ER²Score (Kendall": ([("learned_vs_shallow.json", f"er2score/{s}/test/kendall") for s in (42, 43)],
                          ("learned_vs_shallow.json", "er2score/42/shallow_test/kendall"),
                          ("synth_baselines.json", "runs/0/er2_radcliq_test_total/bleu4")),
    "ClinicalBLEURT (Pearson": ([("learned_vs_shallow.json", f"clinical_bleurt/{s}/test/pearson") for s in (42, 43)],
                                ("learned_vs_shallow.json", "clinical_bleurt/42/shallow_test/pearson"),
                                ("synth_baselines.json", "runs/0/bleurt_test/bleu4")),
}


# row label -> (learned, one per seed, and shallow learner) on the unseen-domain test: key paths in
# learned_vs_shallow.json
UNSEEN = {
    "RaTEScore, tuned W": (["ratescore_tuned/sampler_seed 0/test_unseen/kendall"],
                           "ratescore_tuned/sampler_seed 0/shallow_test_unseen/kendall"),
    "ER²Score (pair accuracy": ([f"er2score/{s}/test_unseen/pair_accuracy" for s in (42, 43)],
                                "er2score/42/shallow_test_unseen/pair_accuracy"),
    "ER²Score (Kendall": ([f"er2score/{s}/test_unseen/kendall" for s in (42, 43)],
                          "er2score/42/shallow_test_unseen/kendall"),
    "ClinicalBLEURT (Pearson": ([f"clinical_bleurt/{s}/test_unseen/pearson" for s in (42, 43)],
                                "clinical_bleurt/42/shallow_test_unseen/pearson"),
}


@pytest.mark.parametrize("label", list(TABLE))
def test_the_results_table_reads_its_json(label):
    rows = [line for line in _readme().splitlines() if line.startswith(f"| {label}")]
    assert len(rows) == 1, f"README.md results table: no single row for {label!r}"
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    learned, shallow, bleu = TABLE[label]
    assert cells[1] == " / ".join(f"{_get(*k):.3f}" for k in learned)
    assert cells[2] == f"{_get(*shallow):.3f}"
    assert cells[3] == f"{_get(*bleu):.3f}"
    learned_unseen, shallow_unseen = UNSEEN[label]
    assert cells[4] == " / ".join(f"{_get('learned_vs_shallow.json', k):.3f}" for k in learned_unseen)
    assert cells[5] == f"{_get('learned_vs_shallow.json', shallow_unseen):.3f}"
    assert "SYNTHETIC" in _readme().split("## Results on the sample profile", 1)[1].split("\n", 1)[0]
