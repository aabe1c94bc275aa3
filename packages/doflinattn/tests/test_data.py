"""Data generators."""

import pytest
import torch

from doflinattn import periodic_tokens, spectral_keys, stdlib_sentences


def test_stdlib_sentences_are_real_distinct_and_seeded():
    a = stdlib_sentences(50, seed=0)
    assert a == stdlib_sentences(50, seed=0) and a != stdlib_sentences(50, seed=1)
    assert len(set(a)) == 50
    assert all(6 <= len(s.split()) <= 40 and s[0].isupper() and s[-1] in ".!?" for s in a)
    assert all(">>>" not in s and "`" not in s for s in a)
    with pytest.raises(ValueError, match="'n'"):
        stdlib_sentences(10**5)


def test_spectral_keys_variance_and_decay():
    x = spectral_keys(20000, 6, 1.0, scale=2.0, seed=0)
    assert abs(float((x * x).sum(1).mean()) - 4.0) < 0.1  # E|x|^2 = scale^2
    ev = torch.linalg.eigvalsh(x.T @ x / len(x)).flip(0)
    expect = torch.arange(1, 7, dtype=torch.float64) ** -2.0
    expect = 4.0 * expect / expect.sum()
    assert torch.allclose(ev, expect, rtol=0.1)


def test_periodic_tokens_repeat():
    x = periodic_tokens(100, 40, 7, min_period=3, max_period=8, seed=0)
    assert x.shape == (100, 40) and int(x.min()) >= 0 and int(x.max()) < 7
    for row in x:
        p = next(p for p in range(3, 9) if bool((row[p:] == row[:-p]).all()))
        assert p <= 8
