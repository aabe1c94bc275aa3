"""The tiny detector: shapes of its outputs, crops, seeded training, and that training helps."""

import numpy as np
import pytest
import torch

from commono import TinyDetector, train_detector
from commono.detector import CROP, _crops
from commono.generator import make_single_scenes
from commono.render import VOCAB


def test_outputs_and_probabilities():
    torch.manual_seed(0)
    det = TinyDetector(8).eval()
    x = torch.rand(2, 3, 64, 64)
    centre, colour, pattern = det(x)
    assert (
        centre.shape == (2, 2, 8, 8)
        and colour.shape == (2, 8, 8, 8)
        and pattern.shape == (2, 3, 8, 8)
    )
    with torch.no_grad():
        p = det.type_proba(x)
    assert p.shape == (2, len(VOCAB)) and bool(((p >= 0) & (p <= 1)).all())


def test_crops_are_centred():
    x = torch.arange(2 * 3 * 64 * 64, dtype=torch.float32).reshape(2, 3, 64, 64)
    c = _crops(x, torch.tensor([1, 0]), torch.tensor([30, 5]), torch.tensor([20, 60]))
    assert c.shape == (2, 3, CROP, CROP)
    half = CROP // 2
    assert c[0, :, half, half].tolist() == x[1, :, 30, 20].tolist()
    assert c[1, :, half, half].tolist() == x[0, :, 5, 60].tolist()
    assert c[1, :, half, -1].abs().sum() == 0  # beyond the right edge: zero padding


def test_training_is_seeded():
    scenes = make_single_scenes(10, seed=0, image_size=64)
    kw = {"epochs": 1, "batch_size": 4, "width": 4, "image_size": 64, "seed": 0, "scenes": scenes}
    a, b = train_detector(10, 1e4, **kw), train_detector(10, 1e4, **kw)
    x = TinyDetector.to_tensor(scenes[0][:2])
    with torch.no_grad():
        assert all(torch.equal(u, v) for u, v in zip(a(x), b(x), strict=True))
        assert torch.equal(
            a.shape_logits(_crops(x, torch.tensor([0]), torch.tensor([20]), torch.tensor([20]))),
            b.shape_logits(_crops(x, torch.tensor([0]), torch.tensor([20]), torch.tensor([20]))),
        )


@pytest.mark.slow
def test_training_is_seeded_and_learns():
    scenes = make_single_scenes(60, seed=0, image_size=64)
    kw = {
        "epochs": 25,
        "batch_size": 8,
        "lr": 1e-2,
        "width": 8,
        "image_size": 64,
        "seed": 0,
        "scenes": scenes,
    }
    a = train_detector(60, 1e4, **kw)
    b = train_detector(60, 1e4, **kw)
    x = TinyDetector.to_tensor(scenes[0][:4])
    with torch.no_grad():
        assert torch.equal(a(x)[1], b(x)[1])
    untrained = TinyDetector(8).eval()
    images = scenes[0][6:]
    cells = torch.from_numpy(scenes[2][6:])
    obj = cells[:, 0] >= 0

    def colour_acc(model):
        with torch.no_grad():
            _, colour, _ = model(TinyDetector.to_tensor(images))
        return float((colour.argmax(1)[obj] == cells[:, 1][obj]).float().mean())

    assert colour_acc(a) > colour_acc(untrained) + 0.2
    assert 0 < a.threshold < 1 and a.train_info["stage1"]["steps"] > 0


def test_detect_uses_the_threshold_and_candidates():
    torch.manual_seed(0)
    det = TinyDetector(8).eval()
    img = np.zeros((64, 64, 3), np.uint8)
    p = det.predict_proba(img[None])[0]
    det.threshold = float(np.sort(p)[-3]) - 1e-9 if p.max() > 0 else 0.5
    found = det.detect(img)
    assert found == {VOCAB[k] for k in np.flatnonzero(p > det.threshold)}
    assert det.detect(img, ["not a vocabulary object"]) == set()
