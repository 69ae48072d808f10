"""Rehearse a GPU-session step against the GPU machine's package set, on this machine, before paying
for device time: which distributions must travel as wheels for each step of ``benchmarks/gpu_session.sh``.

    .venv/bin/python benchmarks/gpu/gpu_image.py run -m train memory-probe --config configs/bleurt/paper.yaml ...
    .venv/bin/python benchmarks/gpu/gpu_image.py run benchmarks/scoring/bench_ratescore.py --no-released ...
    .venv/bin/python benchmarks/gpu/gpu_image.py missing    # what this venv has that the image lacks
    .venv/bin/python benchmarks/gpu/gpu_image.py env DIR    # make the environment in DIR and keep it; prints its python

The device tool's GPU machines (``nvidia-h100-x1``, ``nvidia-h200``) run an image with a fixed package
list and no network (their page in the tool library, ``KINDS.md``, as read on 2026-11-17; copied below
as :data:`IMAGE_DISTRIBUTIONS`). ``run`` makes a throw-away environment beside this one that holds only
what the image holds: a venv without site-packages of its own, into which every installed distribution
that the image has (or that an image distribution requires in its version here, see :func:`available`)
is linked, with this repository on its path. The step runs there with that venv's Python (so its child
processes do too); an import of anything else fails as it would on the machine ("No module named ...",
``importlib.util.find_spec`` returns None, no metadata). At the end it names the distributions behind
the imports that failed in the step's output, and every distribution installed here but not on the
image that the step or its child processes looked for (a ``sitecustomize`` notes each module no
finder found, and each distribution whose metadata was asked for, as Lightning checks
``jsonargparse[signatures]``; some are only probed, e.g. transformers asks whether wandb is there,
so a step that passes may list some). A step that passes here needs nothing carried beyond the
repository; one that fails names what to carry (the device README says how: wheels for Python 3.12 in
a carried folder). Versions are not simulated: the image has torch 2.11, transformers 5.17 and Python
3.12, this venv what it has.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
import sysconfig
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROJECT = "radscore"  # this repository's own distribution (installed editable): it travels as the working tree

# The image's distributions (KINDS.md, "nvidia-h100-x1, nvidia-h200: their image, 'cuda'", 2026-11-17),
# names normalised (lower case, '-' for '_' and '.').
IMAGE_DISTRIBUTIONS = frozenset("""
absl-py accelerate aiofiles aiohappyeyeballs aiohttp aiosignal annotated-doc anyio attrs botorch build certifi
charset-normalizer chex click cloudpickle cmake colorama contourpy coverage cuda-bindings cuda-core
cuda-pathfinder cuda-toolkit cupy-cuda13x cycler cython diffrax e3nn einops equinox etils execnet filelock
flatbuffers flax fonttools formulaic frozenlist fsspec gpytorch grpcio h11 h5py hf-xet httpcore httpx
huggingface-hub humanize hypothesis idna imageio iniconfig interface-meta jax jax-cuda13-pjrt jax-cuda13-plugin
jaxlib jaxtyping jinja2 joblib kiwisolver lazy-loader lightning lightning-utilities linear-operator lineax
llvmlite lxml markdown markdown-it-py markupsafe matplotlib mdurl meson ml-dtypes mpi4py mpmath msgpack
multidict multipledispatch mypy-extensions nanobind narwhals networkx ninja numba numba-cuda numpy numpyro
nvidia-cublas nvidia-cuda-cupti nvidia-cuda-nvrtc nvidia-cuda-runtime nvidia-cudnn-cu13 nvidia-cufft
nvidia-cufile nvidia-curand nvidia-cusolver nvidia-cusparse nvidia-cusparselt-cu13 nvidia-ml-py
nvidia-nccl-cu13 nvidia-nvjitlink nvidia-nvshmem-cu13 nvidia-nvtx onnx onnx-ir onnxruntime onnxscript
opencv-python-headless optax opt-einsum opt-einsum-fx optimistix orbax-checkpoint packaging pandas pathspec
patsy peft pillow pip pluggy portalocker prometheus-client propcache protobuf psutil pyarrow pybind11
py-cpuinfo pygments pyre-extensions pyparsing pyproject-hooks pytest pytest-benchmark pytest-cov pytest-mock
pytest-timeout pytest-xdist python-dateutil pytorch-lightning pyyaml regex requests rich sacrebleu safetensors
scikit-build-core scikit-image scikit-learn scipy seaborn sentencepiece sentence-transformers setuptools
shellingham simplejson six sortedcontainers statsmodels sympy tabulate tensorboard tensorboard-data-server
tensorstore threadpoolctl tifffile tiktoken timm tokenizers toolz torch torchaudio torchdiffeq torch-geometric
torchmetrics torchvision tqdm transformers treescope triton typer typing-extensions typing-inspect urllib3
uvloop wadler-lindig werkzeug wheel wrapt xarray xxhash yarl zipp
""".split())


def normalise(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _installed() -> dict[str, importlib.metadata.Distribution]:
    return {normalise(d.metadata["Name"]): d for d in importlib.metadata.distributions()}


def available(image: frozenset[str] = IMAGE_DISTRIBUTIONS) -> set[str]:
    """The image's distributions, this project, and what the image's distributions require as
    installed here (their versions here may need other packages than the image's versions do, e.g.
    huggingface_hub 2 needs httpx2: those are not the step's to carry)."""
    from packaging.requirements import Requirement

    installed = _installed()
    found, todo = set(), [*image, PROJECT]
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        dist = installed.get(name)
        if dist is None or name == PROJECT:
            continue
        for line in dist.requires or []:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(normalise(req.name))
    return found


def missing_here(image: frozenset[str] = IMAGE_DISTRIBUTIONS) -> list[str]:
    """Distributions installed in this environment that the image neither has nor needs."""
    allowed = available(image)
    return sorted(d.metadata["Name"] for name, d in _installed().items() if name not in allowed)


def module_owners() -> dict[str, str]:
    """Top-level module -> a distribution installed here that provides it."""
    return {m: sorted(ds)[0] for m, ds in importlib.metadata.packages_distributions().items()}


def _top_level_entries(dist: importlib.metadata.Distribution) -> set[str]:
    """The first path components of a distribution's files (packages, modules, extension modules,
    its .dist-info), those inside site-packages."""
    out = set()
    for f in dist.files or []:
        parts = Path(str(f)).parts
        if parts and parts[0] not in ("..", "/"):  # files outside site-packages (scripts, data) are not linked
            out.add(parts[0])
    return out


def make_image_env(where: Path, image: frozenset[str] = IMAGE_DISTRIBUTIONS) -> Path:
    """A venv in ``where`` holding only the available distributions (links into this environment's
    site-packages) and this repository; returns its Python."""
    venv.EnvBuilder(with_pip=False, symlinks=True, system_site_packages=False).create(where)
    python = where / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    here = Path(sysconfig.get_paths()["purelib"])
    allowed = available(image)
    for name, dist in _installed().items():
        if name not in allowed or name == PROJECT:
            continue
        base = Path(str(dist.locate_file("")))
        if base.resolve() != here.resolve():
            continue  # not from this site-packages (e.g. the standard library's own)
        for entry in _top_level_entries(dist):
            source, target = base / entry, site / entry
            if source.exists() and not target.exists():
                target.symlink_to(source)
    (site / "radscore_repository.pth").write_text(str(ROOT) + "\n")
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    return python


def asked_for(log: Path, owners: dict[str, str], allowed: set[str]) -> list[str]:
    """The distributions installed here, not on the image, whose modules a process looked for."""
    names = set(log.read_text(encoding="utf-8").split()) if log.is_file() else set()
    installed = {normalise(d.metadata["Name"]): d.metadata["Name"] for d in importlib.metadata.distributions()}
    modules = {owners[m] for m in names if m in owners and normalise(owners[m]) not in allowed}
    dists = {installed[normalise(n[5:])] for n in names if n.startswith("dist:")
             and normalise(n[5:]) in installed and normalise(n[5:]) not in allowed}
    return sorted(modules | dists)


MISSING = re.compile(r"No module named '([\w.]+)'")
LOG_VARIABLE = "RADSCORE_GPU_IMAGE_LOG"
# Last on sys.meta_path of every process in the image environment: reached only when no other finder
# found a module, it notes the name and finds nothing, so the import fails as it would on the machine.
SITECUSTOMIZE = """import os, sys


class _NoteMissing:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if "." not in name:
            with open(os.environ["%s"], "a", encoding="utf-8") as f:
                f.write(name + "\\n")
        return None

    @staticmethod
    def find_distributions(context=None):  # importlib.metadata asks every finder: note the name asked for
        name = getattr(context, "name", None)
        if name:
            with open(os.environ["%s"], "a", encoding="utf-8") as f:
                f.write("dist:" + name + "\\n")
        return iter(())


if os.environ.get("%s"):
    sys.meta_path.append(_NoteMissing)
""" % (LOG_VARIABLE, LOG_VARIABLE, LOG_VARIABLE)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in ("run", "missing", "env"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    if argv[0] == "missing":
        print("\n".join(missing_here()))
        return 0
    if argv[0] == "env":  # a lasting environment, e.g. the PYTHON of a CPU rehearsal of benchmarks/gpu_session.sh
        if len(argv) != 2 or Path(argv[1]).exists():
            print("gpu_image env: give one folder that does not exist yet", file=sys.stderr)
            return 2
        print(make_image_env(Path(argv[1])))
        return 0
    rest = argv[1:]
    if not rest:
        print("gpu_image run: give -m MODULE ARGS... or SCRIPT ARGS...", file=sys.stderr)
        return 2
    owners, allowed = module_owners(), available()
    with tempfile.TemporaryDirectory(prefix="gpu_image_") as tmp:
        python = make_image_env(Path(tmp) / "env")
        log = Path(tmp) / "missing.txt"
        done = subprocess.run([str(python), *rest], stderr=subprocess.PIPE, text=True,
                              env={**os.environ, LOG_VARIABLE: str(log)})
        looked_for = asked_for(log, owners, allowed)
    sys.stderr.write(done.stderr)
    failed = sorted({owners.get(m.partition(".")[0], m.partition(".")[0]) for m in MISSING.findall(done.stderr)}
                    - {d for d in owners.values() if normalise(d) in allowed})
    verdict = "passed" if done.returncode == 0 else f"FAILED (exit {done.returncode})"
    print(f"gpu_image: the step {verdict}; imports that failed in its output: {', '.join(failed) or 'none'}; "
          f"looked for by it or its child processes (some only to see whether they are there): "
          f"{', '.join(looked_for) or 'nothing'}", file=sys.stderr)
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())
