import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def _adversarial_sequences(rng, S, L, n, b):
    """S heavy-tailed sequences of L trades leaning toward a random outcome (sizes 0.1 b |t_2|,
    reversed with probability 0.3), as the reproduction draws them."""
    lean = np.eye(n)[rng.integers(n, size=S)][:, None, :] - 1.0 / n
    sign = np.where(rng.random((S, L, 1)) < 0.3, -1.0, 1.0)
    size = 0.1 * b * np.abs(rng.standard_t(2, size=(S, L, 1)))
    return sign * size * (lean + 0.3 * rng.standard_normal((S, L, n)))


@pytest.fixture
def sequences():
    """``sequences(rng, S, L, n, b)``: random adversarial trade sequences ``(S, L, n)``."""
    return _adversarial_sequences
