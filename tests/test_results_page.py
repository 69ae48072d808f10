"""docs/results.md is generated from benchmarks/results/*.json by ``python -m benchmarks.report``: the
committed page is what the command writes now, a results file without a renderer is named on the page
(never dropped silently), and every table whose source JSON holds SYNTHETIC data says SYNTHETIC."""

import json
import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
PAGE = ROOT / "docs" / "results.md"


@pytest.fixture(scope="module")
def report():
    from benchmarks import report

    return report


@pytest.fixture(scope="module")
def generated(report) -> str:
    return report.render(RESULTS)


def test_the_committed_page_is_what_the_command_writes(generated):
    assert PAGE.is_file(), "docs/results.md is missing: run `make results`"
    assert PAGE.read_text() == generated, (
        "docs/results.md differs from `python -m benchmarks.report`'s output over benchmarks/results/*.json: "
        "run `make results` and commit the page")


def test_check_fails_with_a_diff_when_the_page_is_stale(report, tmp_path, capsys):
    page = tmp_path / "results.md"
    assert report.main(["--out", str(page)]) == 0
    assert report.main(["--check", "--out", str(page)]) == 0
    page.write_text(page.read_text().replace("## Scoring speed and parity", "## Scoring (edited by hand)"))
    capsys.readouterr()
    assert report.main(["--check", "--out", str(page)]) == 1
    out = capsys.readouterr().out
    assert "-## Scoring (edited by hand)" in out and "+## Scoring speed and parity" in out


def test_a_results_file_without_a_renderer_is_listed_as_not_rendered(report, tmp_path):
    for p in RESULTS.glob("*.json"):
        shutil.copy(p, tmp_path / p.name)
    (tmp_path / "zz_new_measurement.json").write_text(json.dumps({"pairs_per_s": 1.0}))
    page = report.render(tmp_path)
    unrendered = page.split("\n## Not rendered\n", 1)[1]
    assert "`zz_new_measurement.json`" in unrendered
    assert "zz_new_measurement" not in page.split("\n## Not rendered\n", 1)[0]
    # and every committed file is either a table's source or listed there
    for p in RESULTS.glob("*.json"):
        assert f"`{p.name}`" in page, f"{p.name} appears nowhere on the page"


def _synthetic(node) -> bool:
    """Whether a JSON's data are SYNTHETIC, read independently of the report module."""
    if isinstance(node, dict):
        return node.get("synthetic") is True or any(_synthetic(v) for v in node.values())
    if isinstance(node, list):
        return any(_synthetic(v) for v in node)
    return isinstance(node, str) and "SYNTHETIC" in node


def _tables(page: str) -> list[tuple[str, list[str]]]:
    """(heading line, source file names) of every ``###`` block of the page."""
    blocks = []
    for chunk in re.split(r"\n(?=### )", page)[1:]:
        heading = chunk.splitlines()[0]
        source = next((ln for ln in chunk.splitlines() if ln.startswith("Source: ")), "")
        blocks.append((heading, re.findall(r"\[`([^`]+\.json)`\]", source)))
    return blocks


def test_every_table_on_synthetic_data_says_synthetic(generated):
    blocks = _tables(generated)
    assert blocks, "no tables on the page"
    synthetic = {p.name for p in RESULTS.glob("*.json") if _synthetic(json.loads(p.read_text()))}
    assert {"learned_vs_shallow.json", "synth_baselines.json", "demo_report.json"} <= synthetic
    bad = [h for h, sources in blocks if set(sources) & synthetic and "SYNTHETIC" not in h]
    assert not bad, "tables from SYNTHETIC data without SYNTHETIC in their heading:\n" + "\n".join(bad)
    # the sections that hold only synthetic figures say so before their first table
    for section in ("## Demo", "## Learned metrics"):
        intro = generated.split(f"\n{section}\n", 1)[1].split("\n### ", 1)[0]
        assert "SYNTHETIC" in intro, f"{section}: its introduction does not say SYNTHETIC"


def test_every_table_names_its_file_and_machine(generated):
    for chunk in re.split(r"\n(?=### )", generated)[1:]:
        heading = chunk.splitlines()[0]
        assert re.search(r"^Source: \[`[^`]+\.json`\]\(\.\./benchmarks/results/", chunk, re.M), heading
        assert re.search(r"Machine: ", chunk), f"{heading}: no machine line"


def test_a_results_file_with_an_environment_record_shows_it(report, tmp_path):
    from radscore.environment import describe

    for name in ("tune.json", "train_step.json"):
        shutil.copy(RESULTS / name, tmp_path / name)
    env = {"git_commit": "0123456789abcdef", "git_dirty": False, "python": "3.11.9",
           "versions": {"torch": "2.9.9"}, "cpu": "Recorded CPU 9000", "cpu_count": 2, "cpu_flags": ["avx2"],
           "hardware_class": "avx2", "native_bf16": False, "cpu_capability": "AVX2", "threads": 2,
           "variables": {}, "gpu": None, "precision": "fp32", "seed": 0}
    data = json.loads((tmp_path / "tune.json").read_text())
    (tmp_path / "tune.json").write_text(json.dumps({**data, "environment": env}))
    page = report.render(tmp_path)
    tune = next(chunk for chunk in re.split(r"\n(?=### )", page) if "`tune.json`" in chunk.split("\n", 3)[2])
    assert describe(env) in tune, "the machine line of a file with a record is built from the record"
    assert "Recorded CPU 9000" in tune
    step = next(chunk for chunk in re.split(r"\n(?=### )", page) if "`train_step.json`" in chunk.split("\n", 3)[2])
    assert "Recorded CPU 9000" not in step and "Machine: " in step, "a file without one keeps the older line"
