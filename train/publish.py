"""Publish an export folder to the Hugging Face Hub with a model card.

    python -m train publish <export folder> --repo-id USER/NAME [--private] [--dry-run]

Steps: read the export's manifest; load the export with ``radscore`` exactly as a user would
(an export that does not load is refused before anything is uploaded); write a model card
(``README.md`` with YAML metadata: base_model, datasets, license, tags and a model-index holding
the export's test metrics, then usage snippets); create the repository and upload the folder with
``huggingface_hub``. The token comes from ``HF_TOKEN`` or the user's ``hf auth login``.

``--dry-run`` loads the export, prints every file that would be uploaded and the card, and
touches neither the network nor the folder.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from radscore.export import read_manifest
from radscore.models import PACKAGED_MINILM

CARD = "README.md"
# The packaged model is a copy of this Hub model; a card names the Hub id.
HUB_IDS = {PACKAGED_MINILM: "sentence-transformers/all-MiniLM-L6-v2"}
RATE_NER = "Angelakeke/RaTE-NER"
TASKS = {  # kind -> (model-index task type, task name)
    "ner-iob": ("token-classification", "RaTE NER (IOB)"),
    "ner-span": ("token-classification", "RaTE NER (span)"),
    "reward": ("text-classification", "ER2Score reward model"),
    "bleurt": ("text-classification", "ClinicalBLEURT regression"),
}


class PublishError(ValueError):
    """An export that cannot be published, with the reason."""


def check_loads(folder: Path, kind: str) -> None:
    """Load the export with radscore as a user would; ``PublishError`` when it does not load."""
    try:
        if kind in ("ner-iob", "ner-span"):
            from radscore.ner import load_ner

            load_ner(str(folder), device="cpu")
        elif kind == "reward":
            from radscore import ER2Score

            ER2Score(str(folder), device="cpu")
        elif kind == "bleurt":
            from radscore import ClinicalBLEURT

            ClinicalBLEURT(str(folder), device="cpu")
        else:
            raise PublishError(f"{folder}: no loader for export kind {kind!r}")
    except PublishError:
        raise
    except Exception as err:  # any failure to load means the export must not be published
        raise PublishError(f"{folder}: the export does not load with radscore ({type(err).__name__}: {err}); "
                           "not publishing it") from err


def _training_data(folder: Path) -> str | None:
    """The data folder or Hub id named by the export's training config, when it has one."""
    cfg = folder / "training_config.yaml"
    if not cfg.is_file():
        return None
    import yaml

    data = (yaml.safe_load(cfg.read_text()) or {}).get("data") or {}
    if isinstance(data.get("init_args"), dict):
        data = data["init_args"]
    for key in ("data_dir", "path", "train_path", "data"):
        if isinstance(data.get(key), str):
            return data[key]
    return None


def card_metadata(folder: Path, manifest: dict, repo_id: str) -> dict:
    """The card's YAML metadata: base_model, datasets, license, tags, model-index."""
    from huggingface_hub import EvalResult, ModelCardData

    kind = manifest["kind"]
    backbone = manifest.get("base_model") or manifest.get("backbone")
    base_model = HUB_IDS.get(backbone, backbone)
    data = _training_data(folder)
    on_rate_ner = data == RATE_NER
    metrics_file = folder / "metrics.json"
    metrics = json.loads(metrics_file.read_text()) if metrics_file.is_file() else {}
    task_type, task_name = TASKS[kind]
    dataset_name = "RaTE-NER" if on_rate_ner else f"radscore sample/synthetic data ({data or 'unknown'})"
    results = [EvalResult(task_type=task_type, task_name=task_name, dataset_type=RATE_NER if on_rate_ner else "custom",
                          dataset_name=dataset_name, dataset_split="test", metric_type=key.split("/", 1)[-1],
                          metric_name=key, metric_value=round(float(value), 6))
               for key, value in sorted(metrics.items())
               if key.startswith("test/") and isinstance(value, (int, float))]
    data_card = ModelCardData(
        model_name=repo_id.split("/")[-1],
        base_model=base_model if base_model and "/" in str(base_model) else None,
        datasets=[RATE_NER] if on_rate_ner else None,
        # RaTE-NER is cc-by-nc-4.0: a model trained on it carries that licence
        license="cc-by-nc-4.0" if on_rate_ner else "apache-2.0",
        tags=["radscore", "radiology", "medical", "report-generation-metric", kind],
        library_name="transformers",
        eval_results=results or None,
    )
    return data_card.to_dict()


def usage(kind: str, repo_id: str) -> str:
    if kind in ("ner-iob", "ner-span"):
        text = (f"```python\nfrom radscore import RaTEScore\n\nscorer = RaTEScore(ner=\"{repo_id}\")\n"
                "scorer.compute_score([\"No pleural effusion.\"], [\"Small left pleural effusion.\"])\n```\n")
        if kind == "ner-iob":
            text += ("\nThe folder is a standard token-classification model with the RaTE-NER labels, so the "
                     "released `ratescore` package loads it too:\n\n"
                     f"```python\nfrom RaTEScore import RaTEScore\n\nscorer = RaTEScore(bert_model=\"{repo_id}\")\n```\n")
        return text
    cls = {"reward": "ER2Score", "bleurt": "ClinicalBLEURT"}[kind]
    return (f"```python\nfrom radscore import {cls}\n\nmodel = {cls}(\"{repo_id}\")\n"
            "model.score([\"No pleural effusion.\"], [\"Small left pleural effusion.\"])\n```\n")


def model_card(folder: Path, manifest: dict, repo_id: str) -> str:
    """The whole README.md: YAML metadata, a description, the metrics and usage."""
    import yaml
    from huggingface_hub import ModelCard

    meta = card_metadata(folder, manifest, repo_id)
    kind = manifest["kind"]
    synthetic = meta.get("datasets") is None
    lines = [f"# {repo_id.split('/')[-1]}", "",
             f"A {TASKS[kind][1]} trained with [radscore](https://pypi.org/project/radscore/) "
             f"(export kind `{kind}`, radscore {manifest.get('radscore_version', 'unknown')}).", ""]
    if synthetic:
        lines += ["**Trained on the radscore sample corpus or its synthetic benchmarks, not on the papers' "
                  "data: its metrics are sample figures, not a benchmark result.**", ""]
    index = (meta.get("model-index") or [{}])[0].get("results") or []
    metric_rows = [m for r in index for m in r.get("metrics", [])]
    if metric_rows:
        lines += ["## Test metrics", "", "| metric | value |", "|---|---|"]
        lines += [f"| {m['name']} | {m['value']:.4f} |" for m in metric_rows]
        lines.append("")
    lines += ["## Usage", "", usage(kind, repo_id)]
    body = "\n".join(lines)
    return ModelCard(f"---\n{yaml.safe_dump(meta, sort_keys=False)}---\n\n{body}").content


def upload_plan(folder: Path) -> list[tuple[str, int]]:
    """Every file of the folder that would be uploaded, with its size in bytes."""
    return [(str(p.relative_to(folder)), p.stat().st_size) for p in sorted(folder.rglob("*")) if p.is_file()]


def publish(folder: str | Path, repo_id: str, private: bool = False, dry_run: bool = False,
            token: str | None = None, api=None, echo=print) -> dict:
    """Check, card and upload an export (see the module doc); returns what was (or would be) done."""
    folder = Path(folder)
    if "/" not in repo_id or repo_id.count("/") != 1:
        raise PublishError(f"repo id {repo_id!r} must look like 'user-or-org/name'")
    manifest = read_manifest(folder)
    if manifest.get("kind") not in TASKS:
        raise PublishError(f"{folder}: export kind {manifest.get('kind')!r} cannot be published")
    check_loads(folder, manifest["kind"])
    card = model_card(folder, manifest, repo_id)
    files = [f for f in upload_plan(folder) if f[0] != CARD] + [(CARD, len(card.encode("utf-8")))]
    echo(f"{'file':<48} {'bytes':>12}")
    for name, size in files:
        echo(f"{name:<48} {size:>12,}")
    echo(f"\n--- {CARD} ---\n{card}")
    if dry_run:
        echo(f"dry run: nothing uploaded; would create {'private ' if private else ''}model repo {repo_id}")
        return {"repo_id": repo_id, "files": files, "card": card, "uploaded": False}
    from huggingface_hub import HfApi, get_token

    token = token or get_token()
    if api is None:
        if not token:
            raise PublishError("no Hugging Face token: set HF_TOKEN or run `hf auth login` first")
        api = HfApi(token=token)
    (folder / CARD).write_text(card, encoding="utf-8")
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
    args = p.parse_args(argv)
    try:
        publish(args.export, args.repo_id, private=args.private, dry_run=args.dry_run)
    except (PublishError, ValueError, FileNotFoundError) as err:
        print(f"publish: error: {err}")
        return 2
    return 0
