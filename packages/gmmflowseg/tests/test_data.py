"""The synthetic data sets: determinism, shapes and the annotator modes they promise."""

import numpy as np
from scipy import ndimage

from gmmflowseg.data import make_ambiguous_lesions, make_cracks


def test_lesions_are_deterministic_and_modes_are_what_they_say():
    a = make_ambiguous_lesions(40, size=16, seed=3)
    b = make_ambiguous_lesions(40, size=16, seed=3)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert a["images"].dtype == np.float32 and a["masks"].dtype == np.uint8
    m, modes = a["masks"].astype(bool), a["modes"]
    exact = m[:, 0]
    assert (modes[:, :3] == [0, 1, 2]).all() and set(np.unique(modes[:, 3])) <= {0, 3}
    assert (m[:, 1] >= exact).all() and (m[:, 2] <= exact).all()  # dilated >= exact >= eroded
    assert (m[:, 1].sum((1, 2)) > exact.sum((1, 2))).all()
    missed = modes[:, 3] == 3
    assert not m[missed, 3].any() and (m[~missed, 3] == exact[~missed]).all()
    assert (a["contrast"][missed] < 1.0).all()  # only faint lesions are missed
    assert not np.array_equal(a["images"], make_ambiguous_lesions(40, size=16, seed=4)["images"])


def test_cracks_annotator_styles():
    d = make_cracks(10, size=32, seed=0)
    m = d["masks"].astype(bool)
    thin_all, thick_all, thin_main, thick_main = m[:, 0], m[:, 1], m[:, 2], m[:, 3]
    assert (thin_main <= thin_all).all() and (thick_main <= thick_all).all()
    cross = ndimage.generate_binary_structure(2, 1)
    for i in range(10):
        assert np.array_equal(ndimage.binary_dilation(thin_main[i], cross), thick_main[i])
    assert (thin_all.sum((1, 2)) > thin_main.sum((1, 2))).mean() > 0.5  # branches labelled
    assert (d["modes"] == [0, 1, 2, 3]).all()
