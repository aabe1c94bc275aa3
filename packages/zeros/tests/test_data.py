import pytest
import torch

from paperkit.testing import assert_param_error
from zeros.data import IGNORE, contrast, mqar


def test_mqar_structure():
    tokens, targets = mqar(50, seq_len=32, num_kv=4, vocab=64, seed=1)
    assert tokens.shape == targets.shape == (50, 32) and tokens.dtype == torch.int64
    for x, y in zip(tokens, targets, strict=True):
        keys, values = x[0:8:2], x[1:8:2]
        assert len(set(keys.tolist())) == 4 and keys.min() >= 1 and keys.max() < 32
        assert values.min() >= 32 and values.max() < 64
        asked = (y != IGNORE).nonzero().flatten()
        assert len(asked) == 4 and asked.min() >= 8
        lookup = dict(zip(keys.tolist(), values.tolist(), strict=True))
        for p in asked.tolist():
            assert y[p].item() == lookup[x[p].item()]  # the target is the queried key's value
        filler = torch.ones(32, dtype=torch.bool)
        filler[:8] = False
        filler[asked] = False
        assert (x[filler] == 0).all()


def test_generators_are_seeded():
    assert torch.equal(mqar(4, 16, 2, 16, seed=3)[0], mqar(4, 16, 2, 16, seed=3)[0])
    assert not torch.equal(mqar(4, 16, 2, 16, seed=3)[0], mqar(4, 16, 2, 16, seed=4)[0])
    assert torch.equal(contrast(4, 8, 3, seed=3)[1], contrast(4, 8, 3, seed=3)[1])
    assert not torch.equal(contrast(4, 8, 3, seed=3)[1], contrast(4, 8, 3, seed=5)[1])


def test_contrast_target_is_the_signed_difference():
    x, y = contrast(20, seq_len=10, value_dim=3, seed=0)
    assert x.shape == (20, 10, 5) and y.shape == (20, 3)
    for xi, yi in zip(x, y, strict=True):
        a = xi[:, 3].nonzero().item()
        b = xi[:, 4].nonzero().item()
        assert a < b
        assert torch.equal(yi, xi[a, :3] - xi[b, :3])


@pytest.mark.parametrize(
    ("kwargs", "param"),
    [
        (dict(n=0, seq_len=32, num_kv=4, vocab=64), "n"),
        (dict(n=2, seq_len=11, num_kv=4, vocab=64), "seq_len"),
        (dict(n=2, seq_len=32, num_kv=4, vocab=8), "vocab"),
    ],
)
def test_mqar_bad_arguments(kwargs, param):
    assert_param_error(mqar, **kwargs, param=param)


def test_contrast_bad_arguments():
    assert_param_error(contrast, 2, 1, 3, param="seq_len")
    assert_param_error(contrast, 2, 4, 0, param="value_dim")
