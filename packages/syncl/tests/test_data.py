import numpy as np

from syncl.data import make_bev_sequences


def test_deterministic_under_seed():
    a, ga = make_bev_sequences(5, seed=7)
    b, gb = make_bev_sequences(5, seed=7)
    c, _ = make_bev_sequences(5, seed=8)
    np.testing.assert_array_equal(a, b)
    assert [[o["id"] for o in f] for s in ga for f in s] == [
        [o["id"] for o in f] for s in gb for f in s
    ]
    assert not np.array_equal(a, c)
    assert a.shape == (5, 10, 2, 32, 32) and a.dtype == np.float32


def test_ids_persist_while_alive_and_move_smoothly():
    _, gt = make_bev_sequences(20, seed=1)
    births = deaths = 0
    for seq in gt:
        seen_dead: set[int] = set()
        prev = {}
        for frame in seq:
            ids = [o["id"] for o in frame]
            assert len(ids) == len(set(ids))
            cur = {o["id"]: o for o in frame}
            assert not (set(cur) & seen_dead)  # an id never comes back
            for i in set(prev) - set(cur):
                seen_dead.add(i)
                deaths += 1
            for i in set(cur) & set(prev):
                assert np.linalg.norm(cur[i]["center"] - prev[i]["center"]) < 3.0
                np.testing.assert_array_equal(cur[i]["size"], prev[i]["size"])
            births += len(set(cur) - set(prev)) if prev else 0
            prev = cur
    assert births > 0 and deaths > 0


def test_occluded_objects_are_ground_truth_but_not_in_the_raster():
    X, gt = make_bev_sequences(20, occlusion=0.3, clutter=0.0, seed=2)
    hidden = shown = 0
    for i, seq in enumerate(gt):
        for t, frame in enumerate(seq):
            for o in frame:
                col, row = (o["center"] // 1.0).astype(int)
                if not (0 <= row < 32 and 0 <= col < 32):
                    continue
                others = [
                    p
                    for p in frame
                    if p is not o
                    and p["visible"]
                    and np.linalg.norm(p["center"] - o["center"]) < 4.5
                ]
                if others:
                    continue  # a visible neighbour may cover the same cell
                if o["visible"]:
                    shown += 1
                    assert X[i, t, 0, row, col] == 1.0
                else:
                    hidden += 1
                    assert X[i, t, 0, row, col] == 0.0
    assert hidden > 20 and shown > 100


def test_clutter_adds_sizeless_blobs():
    X0, _ = make_bev_sequences(10, clutter=0.0, seed=5)
    X1, _ = make_bev_sequences(10, clutter=0.5, seed=5)
    assert X1[:, :, 0].sum() > X0[:, :, 0].sum()
    assert ((X1[:, :, 0] == 1) & (X1[:, :, 1] == 0)).sum() > 0
    assert ((X0[:, :, 0] == 1) & (X0[:, :, 1] == 0)).sum() == 0
