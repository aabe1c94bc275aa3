import math

import torch

from fedrw import CharGRU, encode_texts, weighted_lm_loss
from fedrw.model import PAD_ID


def test_weighted_loss_by_hand():
    """Check 9: a hand-computed value. Sample 0 has targets (0, 1) under logits (0, log 3) at
    both positions, NLL log(1+3) and log(1+3) - log 3; sample 1 one non-pad target."""
    log3 = math.log(3.0)
    logits = torch.tensor([[[0.0, log3, 0.0]] * 2, [[0.0, log3, 0.0]] * 2])
    targets = torch.tensor([[1, 2], [2, 0]])  # pad_id 0 ends sample 1
    weights = torch.tensor([0.25, 0.75])
    z = math.log(1 + 3 + 1)
    l0 = ((z - log3) + z) / 2
    l1 = z
    expected = (0.25 * l0 + 0.75 * l1) / 1.0
    got = weighted_lm_loss(logits, targets, weights, pad_id=0)
    assert abs(float(got) - expected) < 1e-6


def test_uniform_weights_reduce_to_the_mean_loss():
    """Check 9: uniform weights give the ordinary mean token NLL (equal lengths, no padding)."""
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(4, 7, 11, generator=g, dtype=torch.float64)
    targets = torch.randint(1, 11, (4, 7), generator=g)
    plain = torch.nn.functional.cross_entropy(logits.transpose(1, 2), targets)
    for w in (torch.ones(4, dtype=torch.float64), torch.full((4,), 3.5, dtype=torch.float64)):
        assert abs(float(weighted_lm_loss(logits, targets, w, PAD_ID)) - float(plain)) < 1e-12


def test_zero_weight_removes_a_sample_and_gradients_flow():
    g = torch.Generator().manual_seed(1)
    logits = torch.randn(3, 5, 6, generator=g, requires_grad=True)
    targets = torch.randint(1, 6, (3, 5), generator=g)
    loss = weighted_lm_loss(logits, targets, torch.tensor([1.0, 0.0, 1.0]))
    loss.backward()
    assert torch.all(logits.grad[1] == 0) and torch.any(logits.grad[0] != 0)
    only = weighted_lm_loss(logits[[0, 2]], targets[[0, 2]], torch.ones(2))
    assert abs(loss.item() - only.item()) < 1e-6


def test_char_gru_shapes():
    tokens = encode_texts(["hello", "hi"])
    assert tokens.shape == (2, 5) and int(tokens[1, 2]) == PAD_ID
    logits = CharGRU(emb=8, hidden=16)(tokens)
    assert logits.shape == (2, 5, 102)
