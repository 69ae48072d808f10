"""bf16 on the CPU only where the CPU has native bfloat16 (train/lightning/precision.py)."""

from __future__ import annotations

from train.lightning.precision import cpu_flags, cpu_has_native_bf16, effective_precision

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
