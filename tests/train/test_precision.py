"""One precision for the sample configs; bf16 on the CPU only where the CPU has native bfloat16
(train/lightning/precision.py)."""

from __future__ import annotations

from pathlib import Path

from train.lightning.precision import cpu_flags, cpu_has_native_bf16, effective_precision

ROOT = Path(__file__).resolve().parents[2]
AVX2 = {"fpu", "sse2", "avx", "avx2", "fma"}
AMX = AVX2 | {"avx512f", "avx512_bf16", "amx_bf16", "amx_tile"}


def test_bf16_becomes_fp32_on_a_cpu_without_native_bfloat16(monkeypatch):
    monkeypatch.delenv("RADSCORE_CPU_BF16", raising=False)
    precision, reason = effective_precision("bf16-mixed", "cpu", flags=AVX2)
    assert precision == "32-true"
    assert "no native bfloat16" in reason and "RADSCORE_CPU_BF16=1" in reason


def test_bf16_is_kept_with_native_bfloat16_on_gpus_and_on_request(monkeypatch):
    monkeypatch.delenv("RADSCORE_CPU_BF16", raising=False)
    assert effective_precision("bf16-mixed", "cpu", flags=AMX) == ("bf16-mixed", None)
    assert effective_precision("bf16-mixed", "gpu", flags=AVX2) == ("bf16-mixed", None)
    assert effective_precision("32-true", "cpu", flags=AVX2) == ("32-true", None)
    monkeypatch.setenv("RADSCORE_CPU_BF16", "1")
    assert effective_precision("bf16-mixed", "cpu", flags=AVX2) == ("bf16-mixed", None)


def test_unknown_flags_change_nothing(tmp_path, monkeypatch):
    monkeypatch.delenv("RADSCORE_CPU_BF16", raising=False)
    assert cpu_flags(tmp_path / "missing") is None
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu avx2 amx_bf16\n")
    assert cpu_flags(info) == {"fpu", "avx2", "amx_bf16"}
    assert cpu_has_native_bf16(cpu_flags(info)) is True
    assert cpu_has_native_bf16({"avx2"}) is False


# every sample config (the bf16 overlays beside them are the opt-in exception)
SAMPLE_CONFIGS = sorted(p for d in ("ner", "reward", "bleurt") for p in (ROOT / "configs" / d).rglob("*.yaml")
                        if "sample" in p.relative_to(ROOT / "configs").as_posix() and p.name != "bf16.yaml")
BF16_OVERLAYS = sorted((ROOT / "configs").rglob("bf16.yaml"))


def _resolved(config, flags):
    """The precision a run of ``config`` trains in on a CPU with ``flags``: the config chain the CLI
    reads, then the CPU fallback of train/lightning/precision.py."""
    from train.lightning.configs import config_chain, read_configs

    trainer = read_configs(*config_chain(config))["trainer"]
    return effective_precision(trainer["precision"], trainer.get("accelerator"), flags=flags)[0]


def test_the_sample_configs_train_in_one_precision_whatever_the_cpu_reports(monkeypatch):
    monkeypatch.delenv("RADSCORE_CPU_BF16", raising=False)
    names = {p.relative_to(ROOT / "configs").as_posix() for p in SAMPLE_CONFIGS}
    assert {"ner/iob_sample.yaml", "ner/span_sample.yaml", "reward/sample.yaml", "bleurt/sample.yaml"} <= names
    for config in SAMPLE_CONFIGS:
        got = {cpu: _resolved(config, flags) for cpu, flags in (("avx2", AVX2), ("amx", AMX), ("unknown", None))}
        assert set(got.values()) == {"32-true"}, (config, got)


def test_bf16_is_an_opt_in_overlay_of_each_sample_config(monkeypatch):
    monkeypatch.delenv("RADSCORE_CPU_BF16", raising=False)
    bases = {p.parent.relative_to(ROOT / "configs").as_posix() for p in BF16_OVERLAYS}
    assert bases == {"ner/iob_sample", "ner/span_sample", "reward/sample", "bleurt/sample"}
    for overlay in BF16_OVERLAYS:
        assert _resolved(overlay, AMX) == "bf16-mixed"
        assert _resolved(overlay, AVX2) == "32-true"  # said aloud by the CLI
