import torch

from gora import DigitsEncoder, GoRALinear, find_targets
from gora.data import digits_tasks
from gora.finetune import METHODS, build_method, train_epochs
from paperkit.testing import assert_param_error, check_state_dict_roundtrip


def test_digits_tasks_split_and_shift():
    tasks = digits_tasks(seed=3, n_train=300)
    assert len(tasks.X_train) == 300 and len(tasks.X_train) + len(tasks.X_test) == 1797 - 901
    assert set(tasks.y_pre.tolist()) == set(range(5)) == set(tasks.y_train.tolist())
    assert tasks.X_pre.shape[1:] == (8, 8) and tasks.X_pre.min() >= 0 and tasks.X_pre.max() <= 1
    other = digits_tasks(seed=4)
    assert not torch.equal(tasks.X_train, other.X_train)
    assert_param_error(digits_tasks, n_train=2000, param="n_train")


def test_encoder_targets_and_roundtrip():
    model = DigitsEncoder(n_classes=3, dim=16, heads=2, layers=2)
    assert len(find_targets(model, ["q", "k", "v", "o", "fc1", "fc2"])) == 12
    x = torch.rand(5, 8, 8)
    assert model(x).shape == (5, 3)
    check_state_dict_roundtrip(lambda: DigitsEncoder(n_classes=3, dim=16, heads=2, layers=2), x)
    assert_param_error(model, torch.rand(5, 8, 7), param="x")
    assert_param_error(model, torch.rand(5, 8, 8).double(), param="x", exc=TypeError)
    assert_param_error(DigitsEncoder, dim=10, heads=4, param="heads")


def test_methods_keep_the_budget_and_freeze_the_base():
    tasks = digits_tasks(0)
    state = DigitsEncoder().state_dict()
    counts = {}
    for method in METHODS:
        model, _ = build_method(method, state, tasks, seed=0, epochs=1)
        counts[method] = sum(p.numel() for p in model.parameters() if p.requires_grad)
    budget = 4 * 4 * (4 * 128 + 2 * 320) + 65 * 5  # r0 = 4 on 24 layers, plus the head
    assert counts["LoRA"] == counts["rsLoRA"] == counts["PiSSA"] == budget
    assert counts["uniform ranks + GoRA init"] == budget
    assert counts["linear probe"] == 65 * 5 and counts["full FT"] > 10 * budget
    assert counts["AdaLoRA"] > budget  # starts at 1.5 r0 and prunes during training
    assert_param_error(build_method, "QLoRA", state, tasks, seed=0, epochs=1, param="method")


def test_loraplus_ratio_scales_only_the_b_factors():
    torch.manual_seed(0)
    model = DigitsEncoder(dim=16, heads=2, layers=1)
    for name in ("q", "fc1"):
        parent = model.blocks[0].attn if name == "q" else model.blocks[0].mlp
        setattr(parent, name, GoRALinear(getattr(parent, name), 2, B=torch.randn(*_b_shape(name))))
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    X, y = torch.rand(8, 8, 8), torch.randint(0, 5, (8,))
    train_epochs(model, X, y, epochs=2, lr=1e-2, seed=0, batch=4, loraplus_ratio=0.0)
    after = dict(model.named_parameters())
    moved = {n for n in before if not torch.equal(before[n], after[n])}
    assert {"blocks.0.attn.q.A", "blocks.0.mlp.fc1.A"} <= moved
    assert not any(n.endswith(".B") for n in moved)


def _b_shape(name):
    return (16, 2) if name == "q" else (64, 2)
