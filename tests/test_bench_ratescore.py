"""The RaTEScore benchmark's own arithmetic: the FLOP count behind the fp32 floor, and workloads
whose sentences never repeat (``benchmarks/bench_ratescore.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from bench_ratescore import bert_flops, cpu_class, distinct_pairs, long_pairs  # noqa: E402


@pytest.mark.parametrize("length", [1, 7, 30])
def test_bert_flops_equal_torchs_count_of_a_forward_pass(length):
    """The floor's FLOPs are the matrix products torch counts in a BERT forward (no pooler, no padding)."""
    from torch.utils.flop_counter import FlopCounterMode
    from transformers import BertConfig, BertForTokenClassification

    config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=48, num_labels=11, attn_implementation="eager")
    model = BertForTokenClassification(config).eval()
    ids = torch.randint(5, 100, (1, length))
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(input_ids=ids, attention_mask=torch.ones_like(ids))
    assert bert_flops(config, [length], n_labels=11) == counter.get_total_flops()
    assert bert_flops(config, [length, length], n_labels=11) == 2 * counter.get_total_flops()


def test_distinct_and_long_workloads_never_repeat_a_sentence():
    pool = [f"Finding number {k} is stable." for k in range(2000)]
    cands, refs = distinct_pairs(pool, 40, seed=1)
    assert len(cands) == len(refs) == 40 and all(4 <= len(t.split(". ")) <= 9 for t in cands + refs)
    lc, lr = long_pairs(pool, 10, seed=1)
    lines = [line.split(": ", 1)[-1].split(". ", 1)[-1] if line[:1].isdigit() else line.split(": ", 1)[-1]
             for t in lc + lr for line in t.splitlines() if line and not line.endswith(":")]
    assert len(lines) == len(set(lines))  # every sentence once in the long workload
    assert all("FINDINGS:" in t and "\n1. " in t for t in lc + lr)
    every = [s for t in cands + refs for s in t.replace(". Finding", ".\nFinding").splitlines()]
    assert len(every) == len(set(every)) and not set(every) & set(lines)  # nor across the two
    with pytest.raises(ValueError, match="ran out"):
        distinct_pairs(pool[:10], 5)


def test_the_hardware_class_comes_from_the_cpu_flags():
    assert cpu_class({"avx2", "fma"}) == {"cpu_flags": ["avx2"], "hardware_class": "avx2"}
    assert cpu_class({"avx2", "avx512f", "avx512_bf16"})["hardware_class"] == "avx512-bf16"
    assert cpu_class({"avx2", "avx512f", "avx512_bf16", "amx_tile", "amx_bf16"})["hardware_class"] == "amx"
    assert cpu_class({"sse4_2"}) == {"cpu_flags": [], "hardware_class": "baseline"}
    here = cpu_class()  # this machine's /proc/cpuinfo
    assert here["hardware_class"] in ("amx", "avx512-bf16", "avx512", "avx2", "baseline")
