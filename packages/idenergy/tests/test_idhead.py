"""The optional ID-fitted head: corruptions, the starting point, and what the loss does."""

import torch

from idenergy.data import load_digits_images
from idenergy.energy import id_energy
from idenergy.idhead import IDHeadBackbone, _dct_matrix, corrupt, fit_id_head
from paperkit.testing import assert_close


def test_dct_is_orthonormal_and_corruptions_keep_their_promise():
    d = _dct_matrix(4)
    assert_close(d @ d.T, torch.eye(4), rtol=0, atol=1e-6)
    x = torch.rand(6, 1, 8, 8, generator=torch.Generator().manual_seed(0))
    y = corrupt(x, torch.Generator().manual_seed(1), step=1e-6)
    for i in range(3):  # first half: patch shuffles keep every pixel value
        assert torch.equal(x[i].flatten().sort().values, y[i].flatten().sort().values)
    assert_close(y[3:], x[3:], rtol=0, atol=1e-5)  # a step of 1e-6 quantises nothing


def test_head_starts_at_the_backbone_and_separates_natural_from_corrupted(backbone):
    head = IDHeadBackbone(backbone)
    x = torch.from_numpy(load_digits_images(16)[:300])
    assert_close(head.logits(x[:4]), backbone.logits(x[:4]), rtol=1e-5, atol=1e-5)
    fitted = fit_id_head(backbone, x, steps=100, seed=0)
    bad = corrupt(x, torch.Generator().manual_seed(2))
    with torch.no_grad():
        e_start = float(id_energy(backbone.logits(x)).mean())
        e_nat = float(id_energy(fitted.logits(x)).mean())
        e_bad = float(id_energy(fitted.logits(bad)).mean())
    assert e_nat < e_start - 1.0 and e_nat < e_bad  # natural pushed down, towards m_in = -8
    assert torch.equal(fitted.features(x[:3]), backbone.features(x[:3]))  # phi frozen
