"""Publish an export folder to the Hugging Face Hub with a model card.

    python -m train publish <export folder> --repo-id USER/NAME [--private] [--dry-run]

Steps: read the export's manifest; load the export with ``radscore`` exactly as a user would
(an export that does not load is refused before anything is uploaded); write a model card
(``README.md`` with YAML metadata: base_model, datasets, license, tags and a model-index holding
the export's test metrics, then usage snippets); create the repository and upload the folder with
``huggingface_hub``. The token comes from ``HF_TOKEN`` or the user's ``hf auth login``.

Licence and datasets come from what the run used: every data key of the export's training config
(NER ``data_dir``; ClinicalBLEURT ``train_path``/``val_path``/``test_path``; ER²Score
``rows``/``val_rows``/``test_rows``), and the base model's licence where radscore knows it, or from
``--license`` and ``--dataset``. A data source radscore does not recognise (anything but the Hub's
RaTE-NER, the sample corpus, its synthetic sets and the test fixtures) is refused until the user
says what it is. The "sample or synthetic" banner appears only when every source is one of those.

``--dry-run`` checks what can be checked locally (the manifest, the files, and loading the export
when everything it needs is on disk: an ER²Score export whose base model is a Hub id is checked
without loading that model, and the output says so), prints every file that would be uploaded and
the card, and touches neither the network nor the folder.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from radscore import registry
from radscore.atomic import write_text_atomic
from radscore.models import PACKAGED_MINILM
from train.release.base import check_export_folder

CARD = "README.md"
# The packaged model is a copy of this Hub model; a card names the Hub id.
HUB_IDS = {PACKAGED_MINILM: "sentence-transformers/all-MiniLM-L6-v2"}
RATE_NER = "Angelakeke/RaTE-NER"
REPO = Path(__file__).resolve().parents[2]
# Data that radscore itself ships or generates: (path prefix relative to the repository, what it is).
OWN_DATA = (("data/samples", "the radscore sample corpus"),
            ("checkpoints/synthetic", "SYNTHETIC sets generated from the radscore sample corpus"),
            ("tests/fixtures", "radscore's test fixtures"))
OWN_DATA_LICENSE = "apache-2.0"  # the project's own licence (pyproject.toml)
DATA_LICENSES = {RATE_NER: "cc-by-nc-4.0"}
# Base models whose licence is known here (their Hub model cards); others: the card says "unknown".
BASE_LICENSES = {
    "sentence-transformers/all-MiniLM-L6-v2": "apache-2.0",
    "microsoft/deberta-v3-base": "mit",
    "microsoft/phi-2": "mit",
    "meta-llama/Meta-Llama-3-8B": "llama3",
    "meta-llama/Meta-Llama-3-8B-Instruct": "llama3",
    "google/gemma-7b": "gemma",
    "lmsys/vicuna-7b-v1.5": "llama2",
    "epfl-llm/meditron-7b": "llama2",
}
PERMISSIVE = {"apache-2.0", "mit", "bsd-3-clause", "bsd-2-clause"}
DATA_KEYS = ("data_dir", "train_path", "val_path", "test_path", "rows", "val_rows", "test_rows")
# kind -> (model-index task type, task name), from the metrics of radscore.registry
TASKS = {k.kind: (k.task_type, k.task_name) for spec in registry.specs() for k in spec.kinds}


class PublishError(ValueError):
    """An export that cannot be published, with the reason."""


def check_loads(folder: Path, kind: str, dry_run: bool = False) -> list[str]:
    """Load the export with radscore as a user would (the scorer of the metric that loads ``kind``,
    :mod:`radscore.registry`, scoring one pair); ``PublishError`` when it does not load.

    In a dry run nothing is fetched: a kind with a ``dry_run_check`` (an ER²Score export whose base
    model is not on disk) gets that check instead of a full load. Returns what was left unchecked."""
    try:
        spec = registry.spec_for_kind(kind)
    except ValueError:
        raise PublishError(f"{folder}: no loader for export kind {kind!r}") from None
    try:
        check = spec.kind(kind).dry_run_check
        unchecked = registry.load(check)(folder) if dry_run and check else None
        if unchecked is None:
            registry.from_export(spec.name, str(folder), device="cpu").compute_score(["No effusion."],
                                                                                     ["Small effusion."])
            unchecked = []
    except Exception as err:  # any failure to load means the export must not be published
        raise PublishError(f"{folder}: the export does not load with radscore ({type(err).__name__}: {err}); "
                           "not publishing it") from err
    return unchecked


def training_data(folder: Path) -> list[str]:
    """Every data source named by the export's training config, or by a scorer bundle's manifest
    (empty when there is none)."""
    manifest = folder / "radscore_manifest.json"
    if manifest.is_file():
        sources = json.loads(manifest.read_text()).get("data_sources")
        if sources:
            return list(sources)
    cfg = folder / "training_config.yaml"
    if not cfg.is_file():
        return []
    import yaml

    data = (yaml.safe_load(cfg.read_text()) or {}).get("data") or {}
    if isinstance(data.get("init_args"), dict):
        data = data["init_args"]
    found = []
    for key in DATA_KEYS:
        value = data.get(key)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and item and item not in found:
                found.append(item)
    return found


def describe_source(source: str) -> tuple[str, str | None, bool]:
    """``(description, licence or None when unknown, is radscore's own sample/synthetic data)``."""
    if source == RATE_NER:
        return f"RaTE-NER ({RATE_NER} on the Hub)", DATA_LICENSES[RATE_NER], False
    path = Path(source)
    if path.is_absolute():
        try:
            path = path.resolve().relative_to(REPO)
        except ValueError:
            return source, None, False
    rel = path.as_posix()
    for prefix, what in OWN_DATA:
        if rel == prefix or rel.startswith(prefix + "/"):
            return f"{what} ({rel})", OWN_DATA_LICENSE, True
    return source, None, False


def resolve_license(sources: list[str], base_model: str | None, license: str | None = None,
                    datasets: list[str] | None = None) -> dict:
    """Licence, datasets and whether the data is radscore's own, from the run or from the user.

    ``PublishError`` when the data source is unknown and the user did not say what it is
    (``--dataset``), or when the licence cannot be decided (``--license``)."""
    base_license = BASE_LICENSES.get(base_model or "")
    if datasets:
        described = [(d, None, False) for d in datasets]
    elif not sources:
        raise PublishError("the export names no training data (no training_config.yaml with a data "
                           "section): say what it was trained on with --dataset (a Hub dataset id or a "
                           "short description) and --license")
    else:
        described = [describe_source(s) for s in sources]
        unknown = [d for d, lic, _ in described if lic is None]
        if unknown:
            raise PublishError(f"training data not known to radscore: {', '.join(unknown)}; say what it is with "
                               "--dataset (a Hub dataset id or a short description) and --license, so the card "
                               "does not claim a wrong licence")
    own = bool(described) and all(is_own for _, _, is_own in described)
    hub_ids = [d for d in (datasets or []) if _looks_like_hub_id(d)]
    if not datasets:
        hub_ids = [s for s in sources if s == RATE_NER]
    if license:
        chosen = license
    else:
        if datasets:
            raise PublishError("--dataset was given without --license: radscore cannot know that data's licence")
        licences = {lic for _, lic, _ in described}
        if base_license:
            licences.add(base_license)
        restrictive = sorted(licences - PERMISSIVE)
        if len(restrictive) > 1:
            raise PublishError(f"the data and base model carry different licences ({', '.join(sorted(licences))}): "
                               "choose the one that applies with --license")
        chosen = restrictive[0] if restrictive else sorted(licences)[0]
    return {"license": chosen, "datasets": hub_ids, "sources": [d for d, _, _ in described],
            "source_licenses": {d: lic for d, lic, _ in described}, "base_license": base_license, "own_data": own}


def _looks_like_hub_id(text: str) -> bool:
    parts = text.split("/")
    return len(parts) == 2 and all(p and " " not in p for p in parts) and not Path(text).exists()


def card_metadata(folder: Path, manifest: dict, repo_id: str, license: str | None = None,
                  datasets: list[str] | None = None) -> dict:
    """The card's YAML metadata: base_model, datasets, license, tags, model-index."""
    from huggingface_hub import EvalResult, ModelCardData

    kind = manifest["kind"]
    backbone = manifest.get("base_model") or manifest.get("backbone")
    base_model = HUB_IDS.get(backbone, backbone)
    info = resolve_license(training_data(folder), base_model, license, datasets)
    metrics_file = folder / "metrics.json"
    metrics = json.loads(metrics_file.read_text()) if metrics_file.is_file() else {}
    task_type, task_name = TASKS[kind]
    dataset_type = info["datasets"][0] if info["datasets"] else "custom"
    dataset_name = "; ".join(info["sources"])
    results = [EvalResult(task_type=task_type, task_name=task_name, dataset_type=dataset_type,
                          dataset_name=dataset_name, dataset_split="test", metric_type=key.split("/", 1)[-1],
                          metric_name=key, metric_value=round(float(value), 6))
               for key, value in sorted(metrics.items())
               if key.startswith("test/") and BASELINE_KEY not in key and isinstance(value, (int, float))]
    data_card = ModelCardData(
        model_name=repo_id.split("/")[-1],
        base_model=base_model if base_model and "/" in str(base_model) else None,
        datasets=info["datasets"] or None,
        license=info["license"],
        tags=["radscore", "radiology", "medical", "report-generation-metric", kind],
        library_name="transformers",
        eval_results=results or None,
    )
    baselines = {k: v for k, v in metrics.items() if BASELINE_KEY in k}
    return {**data_card.to_dict(), "_radscore_data": info, "_radscore_baselines": baselines}


#: marks the text-only baselines the training CLI writes beside a model's test metrics
#: (``test/baseline/<name>/<statistic>``): they go to their own table, never to the model-index
BASELINE_KEY = "/baseline/"


def usage(kind: str, repo_id: str) -> str:
    """The card's usage section: the one the metric that loads ``kind`` registers for it."""
    return registry.spec_for_kind(kind).kind(kind).usage.replace("{repo_id}", repo_id)


def model_card(folder: Path, manifest: dict, repo_id: str, license: str | None = None,
               datasets: list[str] | None = None) -> str:
    """The whole README.md: YAML metadata, a description, the training data, the metrics and usage."""
    import yaml
    from huggingface_hub import ModelCard

    meta = card_metadata(folder, manifest, repo_id, license, datasets)
    info, baselines = meta.pop("_radscore_data"), meta.pop("_radscore_baselines")
    kind = manifest["kind"]
    synthetic = info["own_data"]
    lines = [f"# {repo_id.split('/')[-1]}", "",
             f"A {TASKS[kind][1]} trained with [radscore](https://pypi.org/project/radscore/) "
             f"(export kind `{kind}`, radscore {manifest.get('radscore_version', 'unknown')}).", ""]
    if synthetic:
        lines += ["**Trained on the radscore sample corpus or its synthetic benchmarks, not on the papers' "
                  "data: its metrics are sample figures, not a benchmark result.**", ""]
    lines += ["## Training data", ""]
    lines += [f"- {src}" + (f" (licence: {lic})" if lic else "") for src, lic in info["source_licenses"].items()]
    lines += ["", f"Base model licence: {info['base_license'] or 'not known to radscore: check the base model card'}. "
              f"Licence of this model: {info['license']}.", ""]
    index = (meta.get("model-index") or [{}])[0].get("results") or []
    metric_rows = [m for r in index for m in r.get("metrics", [])]
    if metric_rows:
        lines += ["## Test metrics", "", "| metric | value |", "|---|---|"]
        lines += [f"| {m['name']} | {m['value']:.4f} |" for m in metric_rows]
        lines.append("")
    if baselines:
        lines += ["Text-only baselines (no model) on the same test rows, for scale:", "",
                  "| baseline | statistic | value |", "|---|---|---|"]
        for key, value in sorted(baselines.items()):
            name, statistic = key.split(BASELINE_KEY, 1)[1].split("/", 1)
            lines.append(f"| {name} | {statistic} | {float(value):.4f} |")
        lines.append("")
    lines += ["## Usage", "", usage(kind, repo_id)]
    body = "\n".join(lines)
    return ModelCard(f"---\n{yaml.safe_dump(meta, sort_keys=False)}---\n\n{body}").content


def upload_plan(folder: Path) -> list[tuple[str, int]]:
    """Every file of the folder that would be uploaded, with its size in bytes."""
    return [(str(p.relative_to(folder)), p.stat().st_size) for p in sorted(folder.rglob("*")) if p.is_file()]


def publish(folder: str | Path, repo_id: str, private: bool = False, dry_run: bool = False,
            token: str | None = None, api=None, echo=print, license: str | None = None,
            datasets: list[str] | None = None) -> dict:
    """Check, card and upload an export (see the module doc); returns what was (or would be) done."""
    folder = Path(folder)
    if "/" not in repo_id or repo_id.count("/") != 1:
        raise PublishError(f"repo id {repo_id!r} must look like 'user-or-org/name'")
    manifest = check_export_folder(folder)
    if manifest.get("kind") not in TASKS:
        raise PublishError(f"{folder}: export kind {manifest.get('kind')!r} cannot be published")
    card = model_card(folder, manifest, repo_id, license, datasets)  # refuses unknown data first
    unchecked = check_loads(folder, manifest["kind"], dry_run=dry_run)
    files = [f for f in upload_plan(folder) if f[0] != CARD] + [(CARD, len(card.encode("utf-8")))]
    echo(f"{'file':<48} {'bytes':>12}")
    for name, size in files:
        echo(f"{name:<48} {size:>12,}")
    echo(f"\n--- {CARD} ---\n{card}")
    for note in unchecked:
        echo(f"not checked: {note}")
    if dry_run:
        echo(f"dry run: nothing uploaded; would create {'private ' if private else ''}model repo {repo_id}")
        return {"repo_id": repo_id, "files": files, "card": card, "uploaded": False, "unchecked": unchecked}
    from huggingface_hub import HfApi, get_token

    token = token or get_token()
    if api is None:
        if not token:
            raise PublishError("no Hugging Face token: set HF_TOKEN or run `hf auth login` first")
        api = HfApi(token=token)
    write_text_atomic(folder / CARD, card)
    url = api.create_repo(repo_id=repo_id, private=private, exist_ok=True, repo_type="model")
    api.upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type="model",
                      commit_message=f"radscore {manifest['kind']} export")
    echo(f"uploaded {len(files)} files to {url}")
    return {"repo_id": repo_id, "files": files, "card": card, "uploaded": True, "url": str(url)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m train publish", description=__doc__.split("\n\n")[0])
    p.add_argument("export", help="an export folder (checkpoints/<run>/export)")
    p.add_argument("--repo-id", required=True, help="user-or-org/name on the Hub")
    p.add_argument("--private", action="store_true", help="create the repository as private")
    p.add_argument("--dry-run", action="store_true", help="print the files and the card; upload nothing")
    p.add_argument("--license", default=None,
                   help="licence of the model (SPDX-style id, e.g. cc-by-nc-4.0); default: from the data and "
                        "base model, refused when they do not decide it")
    p.add_argument("--dataset", action="append", default=None,
                   help="what it was trained on (a Hub dataset id or a short description; repeatable), when "
                        "radscore does not recognise the training data; needs --license")
    args = p.parse_args(argv)
    try:
        publish(args.export, args.repo_id, private=args.private, dry_run=args.dry_run,
                license=args.license, datasets=args.dataset)
    except (PublishError, ValueError, FileNotFoundError) as err:
        print(f"publish: error: {err}", file=sys.stderr)
        return 2
    return 0
