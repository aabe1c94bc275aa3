"""The ZR-DETR network (paper Sec. 3): shapes, ranges, heads, zoom use, determinism."""

import pytest
import torch

from paperkit.testing import check_seeded_determinism
from zrdetr.model import ZRDETR, sine_position_encoding


@pytest.mark.parametrize("head", ["gp", "mlp"])
@pytest.mark.parametrize("use_zoom", [True, False])
def test_forward_shapes_ranges_and_no_nan(head, use_zoom):
    torch.manual_seed(0)
    K, B = 5, 2
    model = ZRDETR(K, d_model=32, head=head, use_zoom=use_zoom).eval()
    out = model(torch.rand(B, 1, 64, 64), zoom=None)
    Q = K + 4
    assert out["logits"].shape == (B, Q, K + 1)
    assert out["boxes"].shape == out["box_var"].shape == (B, Q, 4)
    assert out["log_zoom"].shape == (B,)
    assert len(out["aux"]) == 2
    for key in ("logits", "boxes", "box_var", "log_zoom"):
        assert torch.isfinite(out[key]).all()
    assert ((out["boxes"] >= 0) & (out["boxes"] <= 1)).all()
    if head == "gp":
        assert (out["box_var"] > 0).all()
        assert torch.allclose(out["logits"].exp().sum(-1), torch.ones(B, Q), atol=1e-5)
    else:
        assert (out["box_var"] == 0).all()


def test_given_zoom_changes_the_output_once_film_is_trained():
    torch.manual_seed(0)
    model = ZRDETR(3, d_model=16, head="mlp").eval()
    x = torch.rand(2, 1, 32, 32)
    with torch.no_grad():
        model.film.proj.weight.normal_()
    a = model(x, zoom=torch.tensor([1.0, 1.0]))["boxes"]
    b = model(x, zoom=torch.tensor([2.0, 2.0]))["boxes"]
    assert (a - b).abs().max() > 1e-4
    # without a zoom the model uses its own prediction: the same as passing it explicitly
    pred = model(x)["log_zoom"].exp()
    assert torch.allclose(model(x)["boxes"], model(x, zoom=pred)["boxes"], atol=1e-6)


def test_relation_bias_reaches_the_self_attention_gradient():
    torch.manual_seed(0)
    model = ZRDETR(3, d_model=16, head="mlp")
    model(torch.rand(2, 1, 32, 32))["boxes"].sum().backward()
    assert model.relation_bias.bias.grad is not None
    assert model.relation_bias.bias.grad.abs().sum() > 0


def test_eval_is_deterministic_and_state_dict_round_trips():
    x = torch.rand(2, 1, 32, 32)

    def run():
        return ZRDETR(3, d_model=16).eval()(x)["logits"]

    check_seeded_determinism(run)
    a = ZRDETR(3, d_model=16).eval()
    b = ZRDETR(3, d_model=16).eval()
    b.load_state_dict(a.state_dict())
    assert torch.equal(a(x)["boxes"], b(x)["boxes"])


def test_runs_under_autocast():
    model = ZRDETR(3, d_model=16).eval()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(torch.rand(2, 1, 32, 32))
    assert torch.isfinite(out["boxes"].float()).all()


def test_sine_position_encoding_is_unique_per_cell():
    pos = sine_position_encoding(4, 5, 16)
    assert pos.shape == (20, 16)
    assert torch.cdist(pos, pos).add(torch.eye(20)).min() > 1e-3


@pytest.mark.parametrize("estimator", ["boxes", "tokens"])
def test_zoom_estimators_and_the_zoom_free_first_pass(estimator):
    torch.manual_seed(0)
    model = ZRDETR(3, d_model=16, head="mlp", zoom_estimator=estimator).eval()
    x = torch.rand(2, 1, 32, 32)
    out = model(x)
    assert out["log_zoom"].shape == (2,) and torch.isfinite(out["log_zoom"]).all()
    assert len(out["first_pass"]) == (3 if estimator == "boxes" else 0)
    if estimator == "boxes":
        # the first pass does not see the zoom: it is the same whatever zoom is given
        a = model(x, zoom=torch.tensor([0.5, 0.5]))["first_pass"][-1]["boxes"]
        b = model(x, zoom=torch.tensor([2.0, 2.0]))["first_pass"][-1]["boxes"]
        assert torch.equal(a, b)
        assert torch.equal(a, out["first_pass"][-1]["boxes"])
