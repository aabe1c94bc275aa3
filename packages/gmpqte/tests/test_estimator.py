import pytest
import torch

from gmpqte import GMPQTE, layer_topological_entropy, same_label_batch, solve_bit_allocation


def test_estimator_matches_the_functions(trained, digits):
    batch, label = same_label_batch(*digits["train"], batch_size=8)
    est = GMPQTE(max_channels=4, seed=1).fit(trained, batch)
    assert est.te_ == layer_topological_entropy(trained, batch, max_channels=4, seed=1)
    assert est.n_params_ == {
        "conv1": 144.0,
        "conv2": 4608.0,
        "conv3": 9216.0,
        "conv4": 18432.0,
        "fc": 640.0,
    }
    # MACs per image: P_l x output pixels (16x16 for conv1-2, 8x8 for conv3-4)
    assert est.macs_["conv2"] == 4608 * 256 and est.macs_["conv4"] == 18432 * 64
    assert est.macs_["fc"] == 640
    budget = 3 * sum(est.n_params_.values())
    policy = est.policy(budget)
    assert policy == solve_bit_allocation(est.te_, est.n_params_, budget)
    assert est.info_["lp_bound"] >= est.info_["objective"] - 1e-12
    assert est.search_time_ > 0 and set(est.constant_share_) == set(policy)


def test_policy_with_bitops_budget(trained, digits):
    batch, _ = same_label_batch(*digits["train"], batch_size=4)
    est = GMPQTE(max_channels=2).fit(trained, batch)
    budget_bops = 4 * 8 * sum(est.macs_.values())
    policy = est.policy(8 * sum(est.n_params_.values()), budget_bops=budget_bops)
    assert sum(est.macs_[l] * b * 8 for l, b in policy.items()) <= budget_bops


def test_unfitted_policy_and_bad_settings_are_refused():
    with pytest.raises(ValueError, match="fit"):
        GMPQTE().policy(1000.0)
    with pytest.raises(ValueError, match="'bit_choices'"):
        GMPQTE(bit_choices=[])
    with pytest.raises(ValueError, match="'mode'"):
        GMPQTE(mode="graph")


def test_same_label_batch_defaults_to_the_most_frequent_class():
    x = torch.rand(10, 1, 4, 4)
    y = torch.tensor([2, 2, 2, 1, 1, 0, 2, 1, 0, 2])
    batch, label = same_label_batch(x, y, batch_size=3, seed=0)
    assert label == 2 and batch.shape == (3, 1, 4, 4)
    again, _ = same_label_batch(x, y, batch_size=3, seed=0)
    assert torch.equal(batch, again)
    members = {tuple(x[i].flatten().tolist()) for i in range(10) if y[i] == 2}
    assert all(tuple(b.flatten().tolist()) in members for b in batch)
