"""Training losses. :func:`mre_loss`: the margin-reward-enforcement loss of ER²Score (SPEC §3.4).

For pair i with rewards ``r_w,j``, ``r_l,j`` (j = 1..N), sub-score margins ``m_j = s_w,j - s_l,j``
and total margin ``m = s_w - s_l`` (all in "higher is better" units)::

    t_j   = +1 if m_j > 0 else -1
    L_ind = (1/N) Σ_j [ 1(s_w,j ≠ s_l,j) · ReLU(-t_j·(r_w,j - r_l,j) + t_j·m_j)
                        + (1 - 1(s_w,j ≠ s_l,j)) · ReLU(|r_w,j - r_l,j| - c) ]
    L_tot = ReLU(-(Σ_j r_w,j - Σ_j r_l,j) + m)
    L_MRE = Σ_i ( L_ind + λ · L_tot )

``reduction="sum"`` is the paper's Σ over pairs; ``"mean"`` divides it by the number of pairs;
``"none"`` returns the per-pair values. ``terms`` selects the ablations of the paper: ``"both"``
(L_ind + λ·L_tot), ``"total"`` (λ·L_tot only) and ``"individual"`` (L_ind only).
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F

TERMS = ("both", "total", "individual")
REDUCTIONS = ("mean", "sum", "none")


def mre_individual_term(rewards_w: torch.Tensor, rewards_l: torch.Tensor, subscores_w: torch.Tensor,
                        subscores_l: torch.Tensor, c: float = 0.01) -> torch.Tensor:
    """``L_ind`` of every pair, shape (batch,)."""
    m = subscores_w - subscores_l
    dr = rewards_w - rewards_l
    t = torch.where(m > 0, 1.0, -1.0).to(dr.dtype)
    differs = (subscores_w != subscores_l).to(dr.dtype)
    ranked = F.relu(-t * dr + t * m)
    tied = F.relu(dr.abs() - c)
    return (differs * ranked + (1.0 - differs) * tied).mean(dim=-1)


def mre_total_term(rewards_w: torch.Tensor, rewards_l: torch.Tensor, totals_w: torch.Tensor,
                   totals_l: torch.Tensor) -> torch.Tensor:
    """``L_tot`` of every pair, shape (batch,)."""
    return F.relu(-(rewards_w.sum(dim=-1) - rewards_l.sum(dim=-1)) + (totals_w - totals_l))


def mre_loss(rewards_w: torch.Tensor, rewards_l: torch.Tensor, subscores_w: torch.Tensor,
             subscores_l: torch.Tensor, totals_w: torch.Tensor, totals_l: torch.Tensor, lam: float = 1.0,
             c: float = 0.01, reduction: Literal["mean", "sum", "none"] = "sum",
             terms: Literal["both", "total", "individual"] = "both") -> torch.Tensor:
    """The MRE loss (see the module doc). Rewards and sub-scores: (batch, N); totals: (batch,)."""
    if terms not in TERMS:
        raise ValueError(f"terms={terms!r}; expected one of {list(TERMS)}")
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction={reduction!r}; expected one of {list(REDUCTIONS)}")
    if rewards_w.dim() != 2 or rewards_w.shape != rewards_l.shape:
        raise ValueError(f"rewards must both be (batch, N); got {tuple(rewards_w.shape)} and {tuple(rewards_l.shape)}")
    if subscores_w.shape != rewards_w.shape or subscores_l.shape != rewards_w.shape:
        raise ValueError(f"sub-scores must be {tuple(rewards_w.shape)} like the rewards; got "
                         f"{tuple(subscores_w.shape)} and {tuple(subscores_l.shape)}")
    if totals_w.shape != rewards_w.shape[:1] or totals_l.shape != rewards_w.shape[:1]:
        raise ValueError(f"totals must be ({rewards_w.shape[0]},); got {tuple(totals_w.shape)} and {tuple(totals_l.shape)}")
    subscores_w, subscores_l = subscores_w.to(rewards_w.dtype), subscores_l.to(rewards_w.dtype)
    totals_w, totals_l = totals_w.to(rewards_w.dtype), totals_l.to(rewards_w.dtype)
    per_pair = torch.zeros(rewards_w.shape[0], dtype=rewards_w.dtype, device=rewards_w.device)
    if terms in ("both", "individual"):
        per_pair = per_pair + mre_individual_term(rewards_w, rewards_l, subscores_w, subscores_l, c)
    if terms in ("both", "total"):
        per_pair = per_pair + lam * mre_total_term(rewards_w, rewards_l, totals_w, totals_l)
    if reduction == "none":
        return per_pair
    return per_pair.sum() if reduction == "sum" else per_pair.mean()
