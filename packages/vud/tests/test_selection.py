import math

import numpy as np
import pytest
import torch

from vud import TransformerICL, decompose, probe_candidates, select_probe

# hand-built candidate table: (V_a, KL)
VA = np.array([0.50, 0.20, 0.30, 0.10, 0.40, 0.05, 0.60])
KL = np.array([0.000, 0.020, 0.005, 0.300, 0.001, 0.011, 0.002])


def test_threshold_rule():
    best, kept = select_probe(VA, KL, kl_threshold=0.01)
    assert kept.tolist() == [True, False, True, False, True, False, True]
    assert best == 2  # smallest V_a among KL <= 0.01


def test_rank_rule():
    best, kept = select_probe(VA, KL, kl_rank=3)  # KL ranks: 0 (0.000), 4 (0.001), 6 (0.002)
    assert np.flatnonzero(kept).tolist() == [0, 4, 6]
    assert best == 4
    assert select_probe(VA, KL, kl_rank=100)[0] == 5  # everything kept: global min V_a
    tied = np.array([0.0, 0.1, 0.1, 0.1, 0.5, 0.0, 0.2])
    assert select_probe(VA, tied, kl_rank=2)[1].sum() == 2
    assert select_probe(VA, tied, kl_rank=3)[1].tolist() == [1, 1, 1, 1, 0, 1, 0]  # ties kept


def test_nothing_under_threshold_gives_nan(oracle, logistic_context):
    assert select_probe(VA, KL, kl_threshold=0.0)[0] == 0  # KL exactly 0 passes
    best, kept = select_probe(VA, KL + 1, kl_threshold=0.01)
    assert best is None and not kept.any()
    cx, cy, xs = logistic_context(5, seed=0, dtype=torch.float32)
    torch.manual_seed(0)
    model = TransformerICL(1, positional=True)  # untrained, order-sensitive: not consistent
    r = decompose(model, cx, cy, xs, kl_threshold=1e-12, num_permutations=2)
    assert not r.passed and math.isnan(r.aleatoric) and math.isnan(r.epistemic)
    assert r.z_best is None


def test_clip_and_flag_when_va_exceeds_total(logistic_context):
    class Contrarian:
        """Non-Bayesian: certain without data, maximally uncertain once anything is added."""

        task, n_classes = "classification", 2

        def predict(self, ctx_x, ctx_y, query_x):
            p = 0.9 if ctx_x.shape[1] <= 3 else 0.5
            return torch.tensor([1 - p, p]).expand(*query_x.shape[:2], 2).clone()

    cx, cy, xs = logistic_context(3, seed=0, dtype=torch.float32)
    raw = decompose(Contrarian(), cx, cy, xs, num_permutations=1)
    assert raw.aleatoric > raw.total and raw.epistemic < 0 and not raw.clipped
    clipped = decompose(Contrarian(), cx, cy, xs, num_permutations=1, clip=True)
    assert clipped.clipped and clipped.aleatoric == clipped.total and clipped.epistemic == 0


@pytest.mark.parametrize("about", ["x", "data_mean"])
def test_candidates_unique_and_in_box(about):
    g = torch.Generator().manual_seed(0)
    cx = torch.randn(30, 2, generator=g, dtype=torch.float64) * torch.tensor(
        [1.0, 3.0], dtype=torch.float64
    )
    xs = torch.tensor([0.7, -2.0], dtype=torch.float64)
    Z = probe_candidates(
        xs, cx, num_z=40, perturbation_std=0.5, perturb_about=about, decimal_places=2, generator=g
    )
    assert Z.shape == (40, 1, 2)
    assert len({tuple(z.ravel().tolist()) for z in Z}) == 40
    assert torch.equal(Z, torch.round(Z, decimals=2))
    centre = xs if about == "x" else cx.mean(0)
    assert ((Z[:, 0] - centre).abs() <= 5 * 0.5 * cx.std(0) + 1e-2 + 1e-12).all()


def test_candidates_d1_keep_the_distinct_values_found(logistic_context):
    cx, _, xs = logistic_context(15, seed=0)
    Z = probe_candidates(
        xs, cx, num_z=15, perturbation_std=0.01, generator=torch.Generator().manual_seed(0)
    )
    assert 1 <= len(Z) < 15  # s·std_D ≈ 0.02 rounded to 0.1: only a few distinct values exist
    assert len(torch.unique(Z)) == len(Z)


def test_bo_proposals_are_refused_without_botorch(oracle, logistic_context):
    cx, cy, xs = logistic_context(5, seed=0)
    with pytest.raises(ValueError, match="'num_bo_z'"):
        decompose(oracle, cx, cy, xs, num_bo_z=3)
