import math

import numpy as np
import pytest
import scipy.stats
import torch

from vud import categorical_entropy, categorical_kl, gaussian_entropy, gaussian_kl


@pytest.mark.parametrize("base", [math.e, 2.0])
def test_categorical_entropy_and_kl_equal_scipy(base):
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(5), size=40)
    q = rng.dirichlet(np.ones(5), size=40)
    p[0, 0] = 0.0  # a zero entry: 0 log 0 = 0
    p[0] /= p[0].sum()
    tp, tq = torch.from_numpy(p), torch.from_numpy(q)
    # reference: scipy.stats.entropy (entropy, and KL with two arguments)
    np.testing.assert_allclose(
        categorical_entropy(tp, base).numpy(), scipy.stats.entropy(p, base=base, axis=1), atol=1e-12
    )
    np.testing.assert_allclose(
        categorical_kl(tp, tq, base).numpy(),
        scipy.stats.entropy(p, q, base=base, axis=1),
        atol=1e-12,
    )


def test_gaussian_entropy_and_kl_closed_forms():
    rng = np.random.default_rng(1)
    m1, m2 = rng.normal(size=20), rng.normal(size=20)
    v1, v2 = rng.uniform(0.1, 3, size=20), rng.uniform(0.1, 3, size=20)
    t = [torch.from_numpy(a) for a in (m1, v1, m2, v2)]
    # reference: scipy's differential entropy of a normal, and the KL closed form
    # KL = log(s2/s1) + (s1^2 + (m1-m2)^2) / (2 s2^2) - 1/2
    np.testing.assert_allclose(
        gaussian_entropy(t[1]).numpy(), scipy.stats.norm(scale=np.sqrt(v1)).entropy(), atol=1e-12
    )
    closed = np.log(np.sqrt(v2 / v1)) + (v1 + (m1 - m2) ** 2) / (2 * v2) - 0.5
    np.testing.assert_allclose(gaussian_kl(*t).numpy(), closed, atol=1e-12)
    np.testing.assert_allclose(gaussian_kl(*t, base=2).numpy(), closed / np.log(2), atol=1e-12)


def test_non_probabilities_are_refused():
    with pytest.raises(ValueError, match="'p'"):
        categorical_entropy(torch.tensor([0.5, 0.6]))
