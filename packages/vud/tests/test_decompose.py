import numpy as np
import pytest
import torch

from vud import TransformerICL, decompose, probe_bound


def _same(a, b):
    return (
        a.total == b.total
        and a.aleatoric == b.aleatoric
        and np.array_equal(a.z_best, b.z_best)
        and all(np.array_equal(a.candidates[k], b.candidates[k]) for k in a.candidates)
    )


def test_same_seed_same_result_different_seed_different_candidates(logistic_context):
    torch.manual_seed(0)
    model = TransformerICL(1, positional=True)
    cx, cy, xs = logistic_context(8, seed=1, dtype=torch.float32)
    a = decompose(model, cx, cy, xs, seed=3, num_permutations=4)
    b = decompose(model, cx, cy, xs, seed=3, num_permutations=4)
    c = decompose(model, cx, cy, xs, seed=4, num_permutations=4)
    assert _same(a, b) and not _same(a, c)


def test_permutation_seed_matters_only_for_positional_models(logistic_context):
    cx, cy, xs = logistic_context(8, seed=2, dtype=torch.float32)
    Z = torch.tensor([[[0.1]], [[-0.4]]])
    torch.manual_seed(0)
    invariant = TransformerICL(1)
    ordered = TransformerICL(1, positional=True)

    def va(model, seed):
        return probe_bound(model, cx, cy, xs, Z, 3, torch.Generator().manual_seed(seed)).va

    assert (va(invariant, 0) - va(invariant, 1)).abs().max() < 1e-5
    assert (va(ordered, 0) - va(ordered, 1)).abs().max() > 1e-5


def test_base_two_is_nats_over_log_two(oracle, logistic_context):
    cx, cy, xs = logistic_context(6, seed=3)
    nats = decompose(oracle, cx, cy, xs, num_permutations=1)
    bits = decompose(oracle, cx, cy, xs, num_permutations=1, base=2)
    assert abs(bits.total - nats.total / np.log(2)) < 1e-12
    assert abs(bits.aleatoric - nats.aleatoric / np.log(2)) < 1e-12


def test_batched_and_per_call_agree(logistic_context):
    torch.manual_seed(0)
    model = TransformerICL(1)
    cx, cy, xs = logistic_context(6, seed=4, dtype=torch.float32)
    Z = torch.tensor([[[0.1]], [[-0.4]], [[1.0]]])
    a = probe_bound(model, cx, cy, xs, Z, 2, torch.Generator().manual_seed(0))
    b = probe_bound(model, cx, cy, xs, Z, 2, torch.Generator().manual_seed(0), batch_size=1)
    assert (a.va - b.va).abs().max() < 1e-5 and (a.kl - b.kl).abs().max() < 1e-5


def test_bad_inputs_of_the_method_are_refused(oracle, logistic_context):
    cx, cy, xs = logistic_context(6, seed=5)

    class NotNormalised:
        task, n_classes = "classification", 2

        def predict(self, ctx_x, ctx_y, query_x):
            return torch.tensor([0.5, 0.6], dtype=ctx_x.dtype).expand(*query_x.shape[:2], 2)

    cases = [
        ({"ctx_y": cy[:-1]}, "'ctx_y'"),  # context length mismatch
        ({"x_star": torch.zeros(2, dtype=torch.float64)}, "'x_star'"),  # d mismatch
        ({"num_z": 0}, "'num_z'"),
        ({"kl_threshold": -0.01}, "'kl_threshold'"),
        ({"pred": NotNormalised()}, "'pred'"),  # probabilities not summing to 1
    ]
    for change, name in cases:
        kwargs = {"pred": oracle, "ctx_x": cx, "ctx_y": cy, "x_star": xs, **change}
        pred = kwargs.pop("pred")
        with pytest.raises(ValueError, match=name):
            decompose(pred, num_permutations=1, **kwargs)
