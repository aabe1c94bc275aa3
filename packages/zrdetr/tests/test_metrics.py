"""COCO-style mAP (checked against pycocotools), ECE and the variance-error rank correlation
(paper Sec. 4 metrics)."""

import numpy as np
import pytest

from zrdetr.metrics import ap50, bootstrap_map, ece, mean_ap, uncertainty_error_spearman


def _toy(seed=0, n_img=3, K=3):
    """Ground truth: each class at most once per image; detections: noisy copies plus false
    positives, with distinct scores (pycocotools and we break score ties alike only by order)."""
    rng = np.random.default_rng(seed)
    gts, dets = [], []
    scores = iter(rng.permutation(np.linspace(0.05, 0.95, 200)))
    for _ in range(n_img):
        labels = np.flatnonzero(rng.random(K) < 0.8)
        lo = rng.uniform(0, 60, (len(labels), 2))
        boxes = np.concatenate([lo, lo + rng.uniform(8, 30, (len(labels), 2))], 1)
        gts.append({"boxes": boxes, "labels": labels})
        db, dl = [], []
        for b, lab in zip(boxes, labels, strict=True):
            for _ in range(2):
                db.append(b + rng.normal(0, 3, 4) * [1, 1, 1, 1])
                dl.append(lab)
        for _ in range(2):
            lo = rng.uniform(0, 60, 2)
            db.append(np.r_[lo, lo + rng.uniform(5, 20, 2)])
            dl.append(rng.integers(K))
        db = np.array(db)
        db[:, 2:] = np.maximum(db[:, 2:], db[:, :2] + 1)
        dets.append(
            {"boxes": db, "labels": np.array(dl), "scores": np.array([next(scores) for _ in dl])}
        )
    return dets, gts


def test_perfect_detections_give_one_and_shifted_give_zero():
    _, gts = _toy(1)
    perfect = [
        {"boxes": g["boxes"], "labels": g["labels"], "scores": np.ones(len(g["labels"]))}
        for g in gts
    ]
    assert mean_ap(perfect, gts) == pytest.approx(1.0)
    shifted = [{**d, "boxes": d["boxes"] + 500.0} for d in perfect]
    assert mean_ap(shifted, gts) == 0.0
    assert ap50(shifted, gts) == 0.0


def test_matches_pycocotools_on_a_toy_case():
    pytest.importorskip("pycocotools")
    import contextlib
    import io

    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    for seed in range(4):
        dets, gts = _toy(seed)
        images, anns, results = [], [], []
        for i, (d, g) in enumerate(zip(dets, gts, strict=True)):
            images.append({"id": i, "width": 100, "height": 100})
            for b, lab in zip(g["boxes"], g["labels"], strict=True):
                w, h = b[2] - b[0], b[3] - b[1]
                anns.append(
                    {
                        "id": len(anns) + 1,
                        "image_id": i,
                        "category_id": int(lab),
                        "bbox": [b[0], b[1], w, h],
                        "area": w * h,
                        "iscrowd": 0,
                    }
                )
            for b, lab, s in zip(d["boxes"], d["labels"], d["scores"], strict=True):
                results.append(
                    {
                        "image_id": i,
                        "category_id": int(lab),
                        "score": float(s),
                        "bbox": [b[0], b[1], b[2] - b[0], b[3] - b[1]],
                    }
                )
        coco = COCO()
        coco.dataset = {
            "images": images,
            "annotations": anns,
            "categories": [{"id": k} for k in range(3)],
        }
        with contextlib.redirect_stdout(io.StringIO()):
            coco.createIndex()
            ev = COCOeval(coco, coco.loadRes(results), "bbox")
            ev.evaluate()
            ev.accumulate()
            ev.summarize()
        assert mean_ap(dets, gts) == pytest.approx(ev.stats[0], abs=1e-9)
        assert ap50(dets, gts) == pytest.approx(ev.stats[1], abs=1e-9)


def test_bootstrap_interval_contains_the_value_and_has_width():
    dets, gts = _toy(2, n_img=20)
    value, lo, hi = bootstrap_map(dets, gts, [0.5], n_boot=100, seed=0)
    assert value == pytest.approx(ap50(dets, gts))
    assert lo < value < hi


def test_ece_closed_form():
    probs = np.array([0.9, 0.9, 0.2, 0.2])
    correct = np.array([True, False, False, False])
    # bins: {0.9, 0.9} acc 0.5 -> |0.5 - 0.9| * 0.5; {0.2, 0.2} acc 0 -> 0.2 * 0.5
    assert ece(probs, correct) == pytest.approx(0.5 * 0.4 + 0.5 * 0.2)
    assert ece(np.array([1.0, 0.0]), np.array([True, False])) == 0.0


def test_spearman_sign_and_constant():
    var = np.array([0.1, 0.2, 0.3, 0.4])
    assert uncertainty_error_spearman(var, np.array([0.9, 0.8, 0.5, 0.1])) == pytest.approx(1.0)
    assert uncertainty_error_spearman(var, np.array([0.1, 0.5, 0.8, 0.9])) == pytest.approx(-1.0)
    assert np.isnan(uncertainty_error_spearman(np.zeros(4), np.array([0.1, 0.5, 0.8, 0.9])))
