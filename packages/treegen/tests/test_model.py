"""The TreeGen network: admissible-parent masking, sampling shapes and determinism, training."""

import numpy as np
import pytest
import torch

from treegen import GinkgoLike, TreeGen, is_valid, posterior_sample
from treegen.bfn import class_mask
from treegen.model import class_counts


@pytest.fixture(scope="module")
def net():
    torch.manual_seed(0)
    return TreeGen(d_model=16, layers=1, heads=2, n_max=8, scheduler="quadratic").eval()


@pytest.mark.parametrize("n", [2, 4, 7])
def test_outputs_never_put_mass_on_inadmissible_parents(net, n):
    g = torch.Generator().manual_seed(n)
    K = class_counts(n)
    mask = class_mask(K, n - 1)
    theta = torch.rand(3, 2 * n - 2, n - 1, generator=g).masked_fill(~mask, 0)
    theta = theta / theta.sum(-1, keepdim=True)
    leaves = torch.from_numpy(GinkgoLike().sample_jets(3, seed=n, n_min=n, n_max=n)[0][0])
    logits = net(theta, torch.rand(3, generator=g), leaves[None].expand(3, -1, -1))
    probs = logits.softmax(-1)
    assert (probs[:, ~mask] == 0).all()  # leaf parents in [0, n-2], internal j's in [0, j-1]
    torch.testing.assert_close(probs.sum(-1), torch.ones(3, 2 * n - 2))


def test_sample_shapes_and_seed_determinism(net, model):
    leaves = model.sample_jets(1, seed=2, n_min=6, n_max=6)[0][0]
    a = net.sample(leaves, num=7, steps=5, seed=3)
    b = net.sample(leaves, num=7, steps=5, seed=3)
    c = net.sample(leaves, num=7, steps=5, seed=4)
    assert len(a) == 7 and all(t.parents.shape == (11,) for t in a)
    assert a == b and a != c


def test_sample_refuses_more_leaves_than_n_max(model):
    net = TreeGen(d_model=8, layers=1, heads=2, n_max=5)
    leaves = model.sample_jets(1, seed=0, n_min=6, n_max=6)[0][0]
    with pytest.raises(ValueError, match="'leaves'"):
        net.sample(leaves, num=2, steps=2)


def test_training_lowers_the_loss_and_raises_validity(model):
    # a small run: after fitting, the BFN loss falls and more samples are valid than before
    torch.manual_seed(0)
    jets = model.sample_jets(120, seed=11, n_min=4, n_max=4)
    data = [(lv, posterior_sample(lv, model, 6, seed=i)) for i, (lv, _) in enumerate(jets)]
    net = TreeGen(d_model=32, layers=1, heads=2, n_max=4, scheduler="entropy")
    test = model.sample_jets(4, seed=12, n_min=4, n_max=4)

    def validity():
        return np.mean([is_valid(t, lv, model) for lv, _ in test for t in net.sample(lv, 30, 10)])

    before = validity()
    net.fit(data, epochs=6, lr=5e-3, batch=16, seed=0)
    after = validity()
    first, last = np.mean(net.losses[:5]), np.mean(net.losses[-5:])
    assert last < first
    assert after > before + 0.15  # about 0.1 -> 0.35-0.45 over seeds


def test_map_tree_returns_the_best_valid_sample(model):
    leaves = model.sample_jets(1, seed=5, n_min=5, n_max=5)[0][0]
    net = TreeGen(d_model=8, layers=1, heads=2, n_max=6)
    samples = posterior_sample(leaves, model, 50, seed=0)
    tree, ll = net.map_tree(leaves, model=model, samples=samples)
    from treegen import tree_loglik

    assert ll == max(tree_loglik(leaves, s, model) for s in samples)
    assert ll == tree_loglik(leaves, tree, model)
