"""mre_loss against hand-computed values in every branch of SPEC §3.4, with gradients."""

import pytest
import torch

from train.reward.losses import mre_individual_term, mre_loss, mre_total_term

# One pair, four heads, each in another branch:
#   j=0  m_j = 3-1 = 2 > 0, Δr = 0.5       -> ReLU(-0.5 + 2)        = 1.5    dL/dr_w = -1/4
#   j=1  m_j = 0-1 = -1 < 0, Δr = -0.5     -> ReLU(-0.5 + 1)        = 0.5    dL/dr_w = +1/4
#   j=2  m_j = 0, |Δr| = 0.005 <= c = 0.01 -> ReLU(0.005 - 0.01)    = 0      dL/dr_w = 0
#   j=3  m_j = 0, |Δr| = 0.6 > c          -> ReLU(0.6 - 0.01)      = 0.59   dL/dr_w = +1/4
#   L_ind = (1.5 + 0.5 + 0 + 0.59) / 4 = 0.6475
#   total: m = 6 - 5 = 1, Σr_w - Σr_l = 2.0 - 1.405 = 0.595 -> L_tot = 0.405, dL/dr_w,j = -λ
R_W = [0.5, 0.2, 0.3, 1.0]
R_L = [0.0, 0.7, 0.305, 0.4]
S_W = [3.0, 0.0, 2.0, 1.0]
S_L = [1.0, 1.0, 2.0, 1.0]


def tensors(rw=R_W, rl=R_L, sw=S_W, sl=S_L):
    rw = torch.tensor([rw], dtype=torch.float64, requires_grad=True)
    rl = torch.tensor([rl], dtype=torch.float64, requires_grad=True)
    sw, sl = torch.tensor([sw], dtype=torch.float64), torch.tensor([sl], dtype=torch.float64)
    return rw, rl, sw, sl, sw.sum(-1), sl.sum(-1)


def test_individual_term_every_branch():
    rw, rl, sw, sl, _, _ = tensors()
    value = mre_individual_term(rw, rl, sw, sl, c=0.01)
    assert value.item() == pytest.approx(0.6475)
    value.sum().backward()
    torch.testing.assert_close(rw.grad, torch.tensor([[-0.25, 0.25, 0.0, 0.25]], dtype=torch.float64))
    torch.testing.assert_close(rl.grad, -rw.grad)


def test_total_term_and_lambda_with_gradients():
    rw, rl, sw, sl, tw, tl = tensors()
    assert mre_total_term(rw, rl, tw, tl).item() == pytest.approx(0.405)
    loss = mre_loss(rw, rl, sw, sl, tw, tl, lam=2.0, c=0.01)
    assert loss.item() == pytest.approx(0.6475 + 2.0 * 0.405)
    loss.backward()
    torch.testing.assert_close(rw.grad, torch.tensor([[-2.25, -1.75, -2.0, -1.75]], dtype=torch.float64))
    torch.testing.assert_close(rl.grad, -rw.grad)


def test_total_term_is_zero_once_the_margin_is_met():
    rw, rl, sw, sl, tw, tl = tensors(rw=[3.0, 0.2, 0.3, 1.0])  # Σr_w - Σr_l = 4.5 - 1.405 >= m = 1
    assert mre_total_term(rw, rl, tw, tl).item() == 0.0
    mre_total_term(rw, rl, tw, tl).sum().backward()
    assert torch.all(rw.grad == 0)


def test_c_is_the_tolerance_of_equal_subscores():
    rw, rl, sw, sl, _, _ = tensors(rw=[2.0, -1.0, 0.3, 1.0])  # heads 0, 1 met; head 2 at 0.005; head 3 at 0.6
    assert mre_individual_term(rw, rl, sw, sl, c=0.01).item() == pytest.approx(0.59 / 4)
    assert mre_individual_term(rw, rl, sw, sl, c=0.001).item() == pytest.approx((0.004 + 0.599) / 4)
    assert mre_individual_term(rw, rl, sw, sl, c=1.0).item() == 0.0


def test_reductions_and_the_ablation_terms():
    a, b = tensors(), tensors(rw=[3.0, 0.2, 0.3, 1.0])
    rw, rl, sw, sl, tw, tl = (torch.cat([x, y]) for x, y in zip(a, b))
    per_pair = mre_loss(rw, rl, sw, sl, tw, tl, lam=1.0, reduction="none")
    ind_b = (0.0 + 0.5 + 0.0 + 0.59) / 4  # head 0 of pair b: Δr = 3 >= m_j = 2
    torch.testing.assert_close(per_pair, torch.tensor([0.6475 + 0.405, ind_b], dtype=torch.float64))
    assert mre_loss(rw, rl, sw, sl, tw, tl, reduction="sum").item() == pytest.approx(per_pair.sum().item())
    assert mre_loss(rw, rl, sw, sl, tw, tl, reduction="mean").item() == pytest.approx(per_pair.mean().item())
    only_total = mre_loss(rw, rl, sw, sl, tw, tl, lam=1.5, terms="total", reduction="none")
    torch.testing.assert_close(only_total, torch.tensor([1.5 * 0.405, 0.0], dtype=torch.float64))
    only_ind = mre_loss(rw, rl, sw, sl, tw, tl, lam=1.5, terms="individual", reduction="none")
    torch.testing.assert_close(only_ind, torch.tensor([0.6475, ind_b], dtype=torch.float64))


def test_bad_arguments_are_named():
    rw, rl, sw, sl, tw, tl = tensors()
    with pytest.raises(ValueError, match="terms="):
        mre_loss(rw, rl, sw, sl, tw, tl, terms="neither")
    with pytest.raises(ValueError, match="reduction="):
        mre_loss(rw, rl, sw, sl, tw, tl, reduction="max")
    with pytest.raises(ValueError, match="sub-scores must be"):
        mre_loss(rw, rl, sw[:, :2], sl, tw, tl)
    with pytest.raises(ValueError, match="totals must be"):
        mre_loss(rw, rl, sw, sl, tw[None], tl)
