import random

import numpy as np
import pytest
import torch

from paperkit.seeding import seed_everything


def draw():
    # the legacy global state is what seed_everything seeds
    return random.random(), np.random.rand(), torch.rand(3)  # noqa: NPY002


def test_same_seed_same_draws_different_seed_different_draws():
    seed_everything(7)
    a = draw()
    seed_everything(7)
    b = draw()
    seed_everything(8)
    c = draw()
    assert a[0] == b[0] and a[1] == b[1] and torch.equal(a[2], b[2])
    assert a[0] != c[0] and a[1] != c[1] and not torch.equal(a[2], c[2])


def test_returns_a_seeded_generator():
    assert seed_everything(3).integers(1 << 30) == np.random.default_rng(3).integers(1 << 30)


def test_large_seeds_are_accepted():
    seed_everything(2**40)


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True])
def test_rejects_bad_seeds(bad):
    with pytest.raises(ValueError, match="The 'seed' parameter of seed_everything"):
        seed_everything(bad)
