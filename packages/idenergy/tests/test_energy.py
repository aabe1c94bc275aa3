"""ID energy and the differential score (Sec. 3 of the paper: E(x) = -T logsumexp(g(x)/T) and the
DEnD score, the mean change of E under small perturbations)."""

import numpy as np
import pytest
import torch
from scipy import ndimage

from conftest import Counting
from idenergy.detectors import DEnDDetector
from idenergy.energy import differential_energy, gaussian_blur, id_energy
from paperkit.testing import assert_close, gradcheck64


class Shifted:
    """The backbone's logits plus a constant c."""

    def __init__(self, base, c):
        self.base, self.c = base, c

    def logits(self, x):
        return self.base.logits(x) + self.c


def test_id_energy_matches_hand_formula_and_low_temperature_limit():
    g = torch.Generator().manual_seed(1)
    logits = torch.randn(7, 12, generator=g, dtype=torch.float64) * 3
    for T in (0.5, 1.0, 2.0):
        by_hand = -T * np.log(np.exp(logits.numpy() / T).sum(axis=1))  # closed form
        assert_close(id_energy(logits, T), by_hand, rtol=1e-12, atol=1e-12)
    # T -> 0: -T logsumexp(l / T) -> -max(l); the gap is at most T log P = 1e-3 log 12
    assert_close(id_energy(logits, 1e-3), -logits.max(dim=1).values, rtol=0, atol=1e-2)


def test_constant_shift_of_logits(backbone):
    g = torch.Generator().manual_seed(2)
    logits = torch.randn(5, 8, generator=g, dtype=torch.float64)
    assert_close(id_energy(logits + 3.5), id_energy(logits) - 3.5, rtol=0, atol=1e-12)
    x = torch.rand(6, 1, 16, 16, generator=g)
    for mode in ("abs", "signed"):
        a = differential_energy(
            backbone, x, n=4, mode=mode, generator=torch.Generator().manual_seed(0)
        )
        b = differential_energy(
            Shifted(backbone, 7.0), x, n=4, mode=mode, generator=torch.Generator().manual_seed(0)
        )
        assert_close(b, a, rtol=1e-4, atol=1e-5)  # float32 round-off of energies near -7


def test_energy_gradient_is_minus_softmax():
    g = torch.Generator().manual_seed(3)
    logits = torch.randn(4, 6, generator=g, dtype=torch.float64, requires_grad=True)
    T = 0.7
    id_energy(logits, T).sum().backward()
    assert_close(logits.grad, -torch.softmax(logits.detach() / T, dim=1), rtol=1e-12, atol=1e-14)
    assert gradcheck64(lambda z: id_energy(z, T), logits.detach())


def test_sigma_zero_gives_zero_and_generator_gives_determinism(backbone):
    x = torch.rand(5, 1, 16, 16, generator=torch.Generator().manual_seed(4))
    zero = differential_energy(backbone, x, sigma=0.0, n=8)
    assert float(zero.detach().abs().max()) <= 1e-6
    a = differential_energy(backbone, x, generator=torch.Generator().manual_seed(9))
    b = differential_energy(backbone, x, generator=torch.Generator().manual_seed(9))
    c = differential_energy(backbone, x, generator=torch.Generator().manual_seed(10))
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert bool((a > 0).all())


def test_stacked_batch_equals_per_perturbation_loop(backbone):
    """The n perturbations are scored in one forward; the loop over them gives the same score."""
    x = torch.rand(4, 1, 16, 16, generator=torch.Generator().manual_seed(5))
    n, sigma = 3, 0.05
    eps = torch.randn((n, *x.shape), generator=torch.Generator().manual_seed(6))
    e0 = id_energy(backbone.logits(x))
    loop = torch.stack(
        [id_energy(backbone.logits((x + sigma * eps[i]).clamp(0, 1))) - e0 for i in range(n)]
    )
    stacked = differential_energy(backbone, x, sigma, n, generator=torch.Generator().manual_seed(6))
    signed = differential_energy(
        backbone, x, sigma, n, mode="signed", generator=torch.Generator().manual_seed(6)
    )
    assert_close(stacked, loop.abs().mean(0), rtol=1e-4, atol=1e-5)
    assert_close(signed, loop.mean(0), rtol=1e-4, atol=1e-5)


def test_one_backbone_call_per_batch(backbone):
    counting = Counting(backbone)
    det = DEnDDetector(counting, n=8, batch_size=16)
    det.score_samples(torch.rand(40, 1, 16, 16))
    assert counting.calls == 3  # ceil(40 / 16) batches, one stacked forward each
    assert counting.rows == [16 * 9, 16 * 9, 8 * 9]
    counting.calls, counting.rows = 0, []
    DEnDDetector(counting, perturb="blur", batch_size=64).score_samples(torch.rand(10, 1, 16, 16))
    assert counting.calls == 1 and counting.rows == [20]  # the blur is deterministic: one copy


def test_blur_matches_scipy():
    x = torch.rand(2, 3, 9, 11, generator=torch.Generator().manual_seed(7), dtype=torch.float64)
    ref = ndimage.gaussian_filter(x.numpy(), sigma=(0, 0, 0.5, 0.5), mode="reflect", truncate=4.0)
    assert_close(gaussian_blur(x, 0.5), ref, rtol=1e-10, atol=1e-12)
    wide = ndimage.gaussian_filter(x.numpy(), sigma=(0, 0, 1.5, 1.5), mode="reflect", truncate=4.0)
    assert_close(gaussian_blur(x, 1.5), wide, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "param"),
    [({"T": 0.0}, "T"), ({"n": 0}, "n"), ({"sigma": -0.1}, "sigma"), ({"mode": "max"}, "mode")],
)
def test_bad_hyperparameters(backbone, kwargs, param):
    with pytest.raises(ValueError, match=f"'{param}'"):
        differential_energy(backbone, torch.rand(2, 1, 16, 16), **kwargs)


def test_bad_images(backbone):
    for bad in (
        torch.full((2, 1, 16, 16), 1.5),
        torch.full((2, 1, 16, 16), -0.1),
        torch.rand(1, 16, 16),
    ):
        with pytest.raises(ValueError, match="'x'"):
            differential_energy(backbone, bad)
    nan = torch.rand(2, 1, 16, 16)
    nan[0, 0, 0, 0] = float("nan")
    with pytest.raises(ValueError, match="'x'"):
        differential_energy(backbone, nan)
