import numpy as np
import pytest

from syncl.data import make_bev_sequences
from syncl.metrics import amota, clear_mot, detection_ap


def _perfect(gt):
    return [[[{**o, "score": 1.0} for o in f] for f in s] for s in gt]


def test_perfect_tracker():
    _, gt = make_bev_sequences(3, seed=0)
    pred = _perfect(gt)
    m = clear_mot(gt, pred)
    assert m["MOTA"] == 1.0 and m["IDS"] == 0 and m["FP"] == m["FN"] == 0 and m["MOTP"] == 0.0
    a = amota(gt, pred)
    assert a["AMOTA"] == pytest.approx(1.0) and a["AMOTP"] == pytest.approx(0.0)
    assert detection_ap(gt, pred) == pytest.approx(1.0)


def _two_tracks(swap_at):
    gt, pred = [], []
    for t in range(6):
        a, b = np.array([0.0, 0.0]), np.array([10.0, 0.0])
        gt.append([{"id": 0, "center": a}, {"id": 1, "center": b}])
        ids = (0, 1) if t < swap_at else (1, 0)
        pred.append(
            [
                {"id": ids[0], "center": a + 0.5, "score": 0.9},
                {"id": ids[1], "center": b, "score": 0.8},
            ]
        )
    return gt, pred


def test_swapping_ids_halfway_gives_two_switches():
    gt, pred = _two_tracks(3)
    m = clear_mot(gt, pred)
    assert m["IDS"] == 2 and m["FP"] == m["FN"] == 0
    assert m["MOTA"] == pytest.approx(1 - 2 / 12)
    assert m["MOTP"] == pytest.approx(np.sqrt(0.5) / 2)


def _random_sequence(rng, T=8):
    gt, pred = [], []
    for _ in range(T):
        n = rng.integers(0, 5)
        gid = rng.choice(6, n, replace=False)
        g = [{"id": int(i), "center": rng.uniform(0, 6, 2)} for i in gid]
        m = rng.integers(0, 6)
        pid = rng.choice(8, m, replace=False)
        p = [
            {"id": int(i), "center": rng.uniform(0, 6, 2), "score": float(rng.random())}
            for i in pid
        ]
        gt.append(g)
        pred.append(p)
    return gt, pred


def test_clear_counts_equal_motmetrics():
    mm = pytest.importorskip("motmetrics")
    rng = np.random.default_rng(0)
    for _ in range(20):
        gt, pred = _random_sequence(rng)
        acc = mm.MOTAccumulator(auto_id=True)
        for g, p in zip(gt, pred, strict=True):
            d = np.array([[np.linalg.norm(a["center"] - b["center"]) for b in p] for a in g])
            d = d.reshape(len(g), len(p))
            d[d > 2.0] = np.nan
            acc.update([o["id"] for o in g], [o["id"] for o in p], d)
        ref = mm.metrics.create().compute(
            acc, metrics=["num_false_positives", "num_misses", "num_switches"]
        )
        ours = clear_mot(gt, pred, dist_thr=2.0)
        assert ours["FP"] == int(ref["num_false_positives"].iloc[0])
        assert ours["FN"] == int(ref["num_misses"].iloc[0])
        assert ours["IDS"] == int(ref["num_switches"].iloc[0])


def test_motar_is_clamped_and_noise_scores_lower():
    rng = np.random.default_rng(1)
    gt, pred = _random_sequence(rng, T=20)
    a = amota(gt, pred)
    curve = np.array(a["MOTAR_curve"]["MOTAR"])
    assert curve.shape == (40,) and (curve >= 0).all() and (curve <= 1).all()
    assert a["AMOTA"] < 0.5 and a["AMOTP"] <= 2.0
    assert a["MOTAR_curve"]["recall"][0] == pytest.approx(0.1)


def test_unreachable_recall_scores_zero():
    _, gt = make_bev_sequences(2, seed=3)
    half = [[[{**o, "score": 1.0} for o in f[: len(f) // 2]] for f in s] for s in gt]
    a = amota(gt, half)
    curve = np.array(a["MOTAR_curve"]["MOTAR"])
    recalls = np.array(a["MOTAR_curve"]["recall"])
    P = sum(len(f) for s in gt for f in s)
    reached = sum(len(f) // 2 for s in gt for f in s) / P
    assert (curve[recalls > reached + 1e-9] == 0).all()
    assert a["AMOTP"] == pytest.approx(2.0 * np.mean(recalls > reached + 1e-9))


def test_detection_ap_drops_with_false_positives():
    _, gt = make_bev_sequences(2, seed=4)
    pred = _perfect(gt)
    noisy = [
        [f + [{"id": 99, "center": np.array([-50.0, -50.0]), "score": 2.0}] for f in s]
        for s in pred
    ]
    assert detection_ap(gt, noisy) < detection_ap(gt, pred)
