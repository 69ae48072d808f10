"""The shared optimiser: AdamW in two groups with a linear schedule, fused where torch can."""

from types import SimpleNamespace

import torch

from train.lightning.module import adamw_linear_warmup, fused_adamw_allowed, fused_adamw_supported


def _module(lr=1e-2, head_lr=None):
    torch.manual_seed(0)
    body, head = torch.nn.Linear(4, 4), torch.nn.Linear(4, 2)
    module = SimpleNamespace(hparams=SimpleNamespace(lr=lr, head_lr=head_lr, weight_decay=0.01, warmup_ratio=0.1),
                             trainer=SimpleNamespace(estimated_stepping_batches=10))
    return module, body, head


def test_fused_kernel_is_used_for_float_parameters_on_the_cpu():
    module, body, head = _module(head_lr=1e-1)
    opt = adamw_linear_warmup(module, list(body.parameters()), list(head.parameters()))["optimizer"]
    assert opt.defaults["fused"] is True
    assert [g["lr"] for g in opt.param_groups] == [0.0, 0.0]  # warm-up starts at 0
    assert [g["initial_lr"] for g in opt.param_groups] == [1e-2, 1e-1]
    assert not fused_adamw_supported([])
    assert not fused_adamw_supported([torch.zeros(3, dtype=torch.long)])
    assert not fused_adamw_supported([torch.nn.Parameter(torch.zeros(3)), torch.zeros(2, dtype=torch.int32)])


def test_fused_and_default_adamw_make_the_same_updates():
    torch.manual_seed(1)
    weights = [torch.nn.Parameter(torch.randn(64, 32)) for _ in range(2)]
    copies = [torch.nn.Parameter(w.detach().clone()) for w in weights]
    start = [w.detach().clone() for w in weights]
    fused = torch.optim.AdamW(weights, lr=1e-3, weight_decay=0.01, fused=True)
    default = torch.optim.AdamW(copies, lr=1e-3, weight_decay=0.01)
    for step in range(20):
        grads = [torch.randn(64, 32) for _ in weights]
        for params, opt in ((weights, fused), (copies, default)):
            for p, g in zip(params, grads):
                p.grad = g.clone()
            opt.step()
    assert min(float((w - w0).abs().max()) for w, w0 in zip(weights, start)) > 1e-3  # they did move
    for w, c in zip(weights, copies):
        assert torch.allclose(w, c, atol=1e-6), float((w - c).abs().max())


def test_no_fused_kernel_where_mixed_precision_clips_gradients():
    """bf16-mixed keeps its precision on a CPU with native bf16, where Lightning's mixed-precision plugin
    refuses gradient clipping with a fused optimiser: the default AdamW is used there instead."""
    from pytorch_lightning.plugins.precision import MixedPrecision, Precision

    mixed = MixedPrecision("bf16-mixed", "cpu")
    assert not fused_adamw_allowed(SimpleNamespace(gradient_clip_val=1.0, precision_plugin=mixed))
    assert fused_adamw_allowed(SimpleNamespace(gradient_clip_val=None, precision_plugin=mixed))
    assert fused_adamw_allowed(SimpleNamespace(gradient_clip_val=1.0, precision_plugin=Precision()))
    module, body, head = _module()
    module.trainer = SimpleNamespace(estimated_stepping_batches=10, gradient_clip_val=1.0, precision_plugin=mixed)
    opt = adamw_linear_warmup(module, list(body.parameters()), list(head.parameters()))["optimizer"]
    assert not opt.defaults["fused"]


def test_fitting_warns_for_16_bit_trainable_weights_unless_the_precision_is_pure_16_bit(tmp_path):
    import warnings

    import pytest
    import pytorch_lightning as pl

    from train.lightning.module import ParameterCounts

    class Tiny(ParameterCounts, pl.LightningModule):
        def __init__(self, dtype):
            super().__init__()
            self.body = torch.nn.Linear(4, 1).to(dtype)

        def training_step(self, batch, batch_idx):
            return self.body(batch[0].to(self.body.weight.dtype)).float().pow(2).mean()

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=1e-3)

    data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(4, 4)), batch_size=2)

    def fit(dtype, precision):
        trainer = pl.Trainer(max_steps=1, accelerator="cpu", precision=precision, logger=False,
                             enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                             default_root_dir=tmp_path)
        trainer.fit(Tiny(dtype), data)

    with pytest.warns(UserWarning, match=r"5 of the 5 trainable parameters are 16-bit under precision 'bf16-mixed'"):
        fit(torch.bfloat16, "bf16-mixed")
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*trainable parameters are 16-bit.*")
        fit(torch.bfloat16, "bf16-true")  # chosen on purpose
        fit(torch.float32, "bf16-mixed")  # float32 weights, bf16 compute
