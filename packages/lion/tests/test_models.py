import pytest
import torch

from lion.models import CausalLinearViT, LionViT, SequenceTagger, SoftmaxViT
from paperkit.testing import assert_close, assert_param_error, check_state_dict_roundtrip

SIZE = dict(img_size=8, patch_size=2, in_chans=1, num_classes=3, dim=16, depth=2, heads=2)


@pytest.mark.parametrize("pool", ["mean", "cls"])
@pytest.mark.parametrize(("decay", "order"), [("lit", "raster"), ("d", "snake"), ("s", "snake")])
def test_lion_vit_backends_agree(decay, order, pool):
    torch.manual_seed(0)
    model = LionViT(**SIZE, decay=decay, order=order, pool=pool, chunk_size=5).double()
    x = torch.rand(2, 1, 8, 8, dtype=torch.float64)
    ref = model(x)
    assert ref.shape == (2, 3)
    for backend in ("rnn", "chunk"):
        assert_close(model.set_backend(backend)(x), ref, rtol=0, atol=1e-12)


def test_causal_baseline_is_causal():
    """The causal baseline's token i ignores tokens after i; LION's does not."""
    torch.manual_seed(0)
    tagger = SequenceTagger(5, 5, 12, dim=16, depth=2, heads=2, attention="causal")
    lion = SequenceTagger(5, 5, 12, dim=16, depth=2, heads=2, attention="lion")
    x = torch.randint(5, (2, 12))
    y = x.clone()
    y[:, 8:] = (y[:, 8:] + 1) % 5
    with torch.no_grad():
        assert_close(tagger(x)[:, :8], tagger(y)[:, :8], rtol=0, atol=1e-6)
        assert (lion(x)[:, :8] - lion(y)[:, :8]).abs().max() > 1e-4


def test_baselines_and_state_dict():
    x = torch.rand(2, 1, 8, 8)
    for make in (
        lambda: SoftmaxViT(**SIZE),
        lambda: CausalLinearViT(**SIZE, decay="d"),
        lambda: LionViT(**SIZE, decay="s", order="snake"),
    ):
        assert make()(x).shape == (2, 3)
        check_state_dict_roundtrip(make, x)


def test_tagger_backends_agree():
    torch.manual_seed(0)
    model = SequenceTagger(7, 4, 20, dim=16, depth=2, heads=2, attention="lion", decay="s")
    x = torch.randint(7, (3, 20))
    with torch.no_grad():
        ref = model(x)
        assert ref.shape == (3, 20, 4)
        assert_close(model.set_backend("rnn")(x), ref, rtol=0, atol=1e-5)


def test_bad_arguments():
    assert_param_error(LionViT, **{**SIZE, "patch_size": 3}, param="patch_size")
    assert_param_error(LionViT, **SIZE, pool="max", param="pool")
    assert_param_error(LionViT, **SIZE, decay="x", param="decay")
    assert_param_error(LionViT(**SIZE), torch.rand(2, 3, 8, 8), param="images")
    assert_param_error(SequenceTagger, 5, 5, 8, attention="rnn", param="attention")
    assert_param_error(
        SequenceTagger(5, 5, 8, dim=16, heads=2), torch.zeros(1, 9).long(), param="tokens"
    )
    layer = CausalLinearViT(**SIZE).encoder.blocks[0].attn
    assert_param_error(layer.set_backend, "rnn", param="backend")
    tagger = SequenceTagger(5, 5, 8, dim=16, heads=2)
    assert_param_error(tagger, torch.tensor([[0, 1, 5]]), param="tokens")  # id = vocab
    assert_param_error(tagger, torch.tensor([[0, -1, 2]]), param="tokens")
    assert_param_error(tagger, torch.tensor([[0.0, 1.0]]), param="tokens", exc=TypeError)
    assert_param_error(
        LionViT(**SIZE), torch.rand(2, 1, 8, 8).double(), param="images", exc=TypeError
    )
    assert_param_error(LionViT, **{**SIZE, "heads": 3}, param="heads")
