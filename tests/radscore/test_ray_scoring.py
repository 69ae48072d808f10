"""``radscore score --ray``: the same scorer over Ray Data on a local two-worker Ray instance gives
exactly the single-process records, in input order, with the ids."""

from __future__ import annotations

import json

import pytest

from radscore.cli import main, score_records
from radscore.integrations import make_scorer
from radscore.systems import RADCLIQ
from train.rehearsal.tiny import build_tiny_iob_export, build_tiny_reward_export

ray = pytest.importorskip("ray")

BASE = ["No pleural effusion. Heart size normal.", "", "Mild cardiomegaly.", "Liver is enlarged.",
        "Small left pleural effusion.", "No pneumothorax.", "Heart size is normal.", "Fatty liver.",
        "Right lower lobe pneumonia. No effusion.", "Stable 4 mm nodule in the RUL."]


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


@pytest.mark.slow
def test_ray_scores_equal_single_process_scores_in_order(local_ray, tiny_backbone, tmp_path):
    from radscore.ray_scoring import score_with_ray

    n = 240
    cands = [BASE[(7 * i) % len(BASE)] + ("" if i % 3 else f" Comparison ___ {i}.") for i in range(n)]
    refs = [BASE[(3 * i + 1) % len(BASE)] for i in range(n)]
    ids = [f"study-{i}" for i in range(n)]
    build_tiny_reward_export(tmp_path / "er2", tiny_backbone, RADCLIQ, max_length=48)
    # RaTEScore in chunks of 32 pairs, as the Ray tasks: the same model batches, the same bits
    options = {"ratescore": {"ner": build_tiny_iob_export(tmp_path / "ner", seed=0, head_std=0.3, o_bias=2.5),
                             "encoder": tiny_backbone, "chunk_size": 32},
               "er2": {"export": str(tmp_path / "er2")}}
    for metric, opts in options.items():
        scorer = make_scorer(metric, **opts)
        if metric == "ratescore":
            alone, _ = score_records(scorer, cands, refs, progress=False)
        else:  # ER2Score length-sorts the pairs of one call into batches: call it per Ray chunk
            alone = [rec for lo in range(0, n, 32) for rec in
                     score_records(scorer, cands[lo:lo + 32], refs[lo:lo + 32], progress=False)[0]]
        rows = score_with_ray(metric, opts, cands, refs, ids, actors=2, chunk_size=32)
        assert [r["index"] for r in rows] == list(range(n)) and [r["id"] for r in rows] == ids
        assert [{k: v for k, v in r.items() if k not in ("index", "id")} for r in rows] == \
            json.loads(json.dumps(alone)), metric


@pytest.mark.slow
def test_the_cli_scores_on_ray(local_ray, tiny_backbone, tmp_path, capsys):
    c, r = tmp_path / "c.txt", tmp_path / "r.txt"
    c.write_text("\n".join(BASE) + "\n")
    r.write_text("\n".join(reversed(BASE)) + "\n")
    ner = build_tiny_iob_export(tmp_path / "ner", seed=0, head_std=0.3, o_bias=2.5)
    out_ray, out_one = tmp_path / "ray.jsonl", tmp_path / "one.jsonl"
    common = ["score", "--ner", ner, "--encoder", tiny_backbone, "--candidates", str(c), "--references", str(r), "--quiet"]
    # one actor: each costs a worker process that imports torch (about 8 CPU-s); the order across two is
    # tested above and in the resume test below
    assert main(common + ["--ray", "--ray-actors", "1", "--out", str(out_ray)]) == 0, capsys.readouterr().err
    assert main(common + ["--out", str(out_one)]) == 0
    assert out_ray.read_text() == out_one.read_text()
    assert json.loads((tmp_path / "ray.jsonl.meta.json").read_text())["summary"]["n"] == len(BASE)


@pytest.mark.slow
def test_ray_writes_each_finished_chunk_and_resumes_a_partial_run(local_ray, tiny_backbone, tmp_path, monkeypatch):
    """A run cut after two chunks (without Ray) is resumed on Ray: only the remaining chunks go to
    Ray, each is written as it finishes, in input order, and the file equals an uninterrupted run's."""
    import radscore.streaming as streaming

    n = 30
    c, r = tmp_path / "c.txt", tmp_path / "r.txt"
    c.write_text("".join(BASE[(7 * i) % len(BASE)] + f" Series {i}.\n" for i in range(n)))
    r.write_text("".join(BASE[(3 * i + 1) % len(BASE)] + "\n" for i in range(n)))
    ner = build_tiny_iob_export(tmp_path / "ner", seed=0, head_std=0.3, o_bias=2.5)
    common = ["score", "--ner", ner, "--encoder", tiny_backbone, "--candidates", str(c), "--references", str(r),
              "--chunk-size", "4", "--quiet"]
    assert main(common + ["--out", str(tmp_path / "whole.jsonl")]) == 0
    real, calls = streaming.score_records, []

    def dies_at_the_third_chunk(*a, **k):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("killed")
        return real(*a, **k)

    monkeypatch.setattr(streaming, "score_records", dies_at_the_third_chunk)
    with pytest.raises(RuntimeError):
        main(common + ["--out", str(tmp_path / "s.jsonl")])
    monkeypatch.setattr(streaming, "score_records", real)
    written, write = [], streaming.RecordFile.write_chunk
    monkeypatch.setattr(streaming.RecordFile, "write_chunk",
                        lambda self, rows, values: (written.append([row["index"] for row in rows]),
                                                    write(self, rows, values)))
    assert main(common + ["--ray", "--resume", "--out", str(tmp_path / "s.jsonl")]) == 0
    assert written == [list(range(lo, min(lo + 4, n))) for lo in range(8, n, 4)]
    assert (tmp_path / "s.jsonl").read_bytes() == (tmp_path / "whole.jsonl").read_bytes()
