import copy

import pytest
import torch

from adtp.data import needle_task
from adtp.losses import attribution_loss, flops_loss, standardise
from adtp.model import PrunableEncoder
from adtp.train import (
    ADTPConfig,
    _ig_targets_many,
    content_mask,
    ig_targets,
    make_loader,
    train_adtp,
    train_teacher,
)


def _setup(seed=0):
    torch.manual_seed(seed)
    model = PrunableEncoder(200, 16, 3, 2, 32, 24, 2, [1, 2])
    data = needle_task(48, min_len=12, max_len=24, max_signals=3, seed=seed)
    return model, data


def test_teacher_training_is_seeded_and_lowers_the_loss():
    runs = []
    for _ in range(2):
        model, x = _setup()
        hist = train_teacher(
            model, x.input_ids, x.attention_mask, x.labels, epochs=4, lr=3e-3, batch_size=16
        )
        runs.append((hist, model.head.weight.detach().clone()))
    assert runs[0][0] == runs[1][0] and torch.equal(runs[0][1], runs[1][1])
    assert runs[0][0][-1] < runs[0][0][0]


def test_ig_targets_are_distributions_over_content_tokens():
    model, x = _setup()
    g = ig_targets(model, x.input_ids, x.attention_mask, x.labels, steps=4, batch_size=20)
    content = content_mask(x.attention_mask)
    assert bool((g[~content] == 0).all()) and bool((g >= 0).all())
    sums = g.sum(1)
    assert torch.allclose(sums[sums > 0], torch.ones_like(sums[sums > 0]), atol=1e-5)
    gh = ig_targets(
        model,
        x.input_ids[:4],
        x.attention_mask[:4],
        x.labels[:4],
        steps=4,
        ig_layer="hidden",
        absolute=True,
    )
    assert gh.shape == (4, 2, x.input_ids.shape[1])
    assert torch.allclose(gh.sum(-1), torch.ones(4, 2), atol=1e-5)


@pytest.mark.parametrize("layer", ["embedding", "hidden"])
def test_one_ig_pass_gives_both_targets(layer):
    """The ablations' single pass equals two ig_targets calls; |IG| puts weight on tokens that
    max(IG, 0) zeroes (negative attributions), and agrees with it where IG > 0 up to scale."""
    model, x = _setup()
    ids, mask, y = x.input_ids[:12], x.attention_mask[:12], x.labels[:12]
    signed, absolute = _ig_targets_many(
        model, ids, mask, y, steps=3, method="riemann_right", ig_layer=layer
    )
    for flag, got in ((False, signed), (True, absolute)):
        want = ig_targets(model, ids, mask, y, steps=3, ig_layer=layer, absolute=flag)
        assert torch.equal(got, want)
    assert bool(((signed == 0) & (absolute > 0)).any())  # tokens voting against the label
    # where IG > 0 both are |IG| over a row total: |IG| target = max target * (S+ / S_abs)
    positive = absolute.where(signed > 0, 0)
    assert torch.allclose(positive, signed * positive.sum(-1, keepdim=True), atol=1e-6)


def test_per_layer_targets_train_like_one_shared_target():
    """(B, K, N) targets (ig_layer="hidden") are trimmed on the token axis like (B, N) ones:
    K copies of one target train exactly as the shared target does."""
    teacher, x = _setup()
    g = ig_targets(teacher, x.input_ids, x.attention_mask, x.labels, steps=2)
    K = len(teacher.prune_layers)
    runs = []
    for target in (g, g[:, None].expand(-1, K, -1).contiguous()):
        loader = make_loader(x.input_ids, x.attention_mask, x.labels, target, batch_size=8)
        widths = [int(mask.sum(1).max()) for _, mask, _, _ in loader]
        assert min(widths) < x.input_ids.shape[1]  # some batches are trimmed
        student = copy.deepcopy(teacher)
        history = train_adtp(student, teacher, loader, ADTPConfig(phi=0.5, joint_epochs=1))
        runs.append((history, [p.detach().clone() for p in student.parameters()]))
    (h2, w2), (h3, w3) = runs
    assert h2.keys() == h3.keys()
    for name in h2:
        assert h2[name] == pytest.approx(h3[name], rel=1e-6, abs=1e-9)
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(w2, w3, strict=True))


def test_ig_targets_leave_requires_grad_as_found():
    model, x = _setup()
    model.head.weight.requires_grad_(False)
    ig_targets(model, x.input_ids[:2], x.attention_mask[:2], x.labels[:2], steps=2)
    assert not model.head.weight.requires_grad and model.tok_emb.weight.requires_grad


def test_attribution_loss_is_zero_when_predictor_matches_target():
    mask = torch.tensor([[False, True, True, True, False]])
    g = torch.tensor([[0.0, 0.2, 0.5, 0.3, 0.0]])
    z = standardise(g, mask)
    assert float(attribution_loss([z, z], g, mask)) == pytest.approx(0.0, abs=1e-6)
    assert float(attribution_loss([-z], g, mask)) > 0.1
    assert float(attribution_loss([z], torch.zeros_like(g), mask)) == 0.0  # no target, no loss


def test_flops_loss_uses_the_batch_ratio():
    assert float(flops_loss(torch.tensor([1.0, 3.0]), torch.tensor([4, 4]), 0.5)) == pytest.approx(
        0.0
    )


def test_train_adtp_stage2_fits_the_targets_and_is_seeded():
    teacher, x = _setup()
    train_teacher(teacher, x.input_ids, x.attention_mask, x.labels, epochs=1, batch_size=16)
    g = ig_targets(teacher, x.input_ids, x.attention_mask, x.labels, steps=4)
    hists, students = [], []
    for _ in range(2):
        loader = make_loader(x.input_ids, x.attention_mask, x.labels, g, batch_size=16)
        student = copy.deepcopy(teacher)
        hists.append(
            train_adtp(
                student, teacher, loader, ADTPConfig(predictor_epochs=6, joint_epochs=1, phi=0.4)
            )
        )
        students.append(student)
    h = hists[0]
    assert h["attr_stage2"][-1] < h["attr_stage2"][0]
    assert h["loss"] == hists[1]["loss"]  # same seed, same batches, same steps
    assert torch.equal(students[0].retainer.net[-1].bias, students[1].retainer.net[-1].bias)
    assert all(p.requires_grad for p in teacher.parameters())
    out = students[0](x.input_ids, x.attention_mask, "hard")
    assert bool((out["flops"] < teacher(x.input_ids, x.attention_mask)["flops"]).all())


def test_joint_training_moves_the_flops_towards_phi():
    teacher, x = _setup(1)
    loader = make_loader(x.input_ids, x.attention_mask, x.labels, batch_size=16)
    student = copy.deepcopy(teacher)
    h = train_adtp(
        student,
        teacher,
        loader,
        ADTPConfig(phi=0.2, predictor_epochs=0, joint_epochs=8, eta=50.0, lr=1e-2),
    )
    assert abs(h["flops_ratio"][-1] - 0.2) < abs(h["flops_ratio"][0] - 0.2)


def test_loader_batches_similar_lengths_and_is_seeded():
    x = needle_task(200, min_len=16, max_len=64, seed=0)
    a = [b[0] for b in make_loader(x.input_ids, x.attention_mask, x.labels, batch_size=20, seed=3)]
    b = [b[0] for b in make_loader(x.input_ids, x.attention_mask, x.labels, batch_size=20, seed=3)]
    assert all(torch.equal(u, v) for u, v in zip(a, b, strict=True))
    spread = [float((t != 0).sum(1).max() - (t != 0).sum(1).min()) for t in a]
    assert sum(spread) / len(spread) < 20  # random batches of lengths U[16, 64] spread ~ 43
