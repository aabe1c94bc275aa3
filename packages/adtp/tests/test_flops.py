import pytest

from adtp.flops import encoder_flops


@pytest.mark.parametrize(("n", "L", "D", "F"), [(128, 12, 768, 3072), (7, 3, 16, 40), (1, 1, 1, 1)])
def test_encoder_flops_closed_form(n, L, D, F):
    # 2 L (4 n D^2 + 2 n^2 D + 2 n D F): projections, attention products, feed-forward
    assert encoder_flops([n] * L, D, F) == 2 * L * (4 * n * D * D + 2 * n * n * D + 2 * n * D * F)


def test_bert_base_at_128_tokens():
    # BERT-base (12 layers, D 768, FFN 3072), n = 128: about 22.3 GFLOPs
    assert encoder_flops([128] * 12, 768, 3072) / 1e9 == pytest.approx(22.3, abs=0.05)


def test_pruned_layers_cost_less():
    assert encoder_flops([64, 32, 16], 64, 128) < encoder_flops([64, 64, 64], 64, 128)
