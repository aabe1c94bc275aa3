import numpy as np

from mconformal import GaussianMixture, PlantNetStyle, digits_split, same_class_views
from paperkit.testing import assert_param_error


def test_gaussian_mixture_shapes_and_means():
    data = GaussianMixture.make(4, 3, 1.5, seed=0)
    rng = np.random.default_rng(0)
    X, y = data.single(2000, rng)
    assert X.shape == (8000, 3) and np.bincount(y).tolist() == [2000] * 4
    for k in range(4):  # the sample mean of each class is its mean (SE 1/sqrt(2000) per coordinate)
        assert np.abs(X[y == k].mean(0) - data.means[k]).max() < 0.1
    views, labels = data.multi(10, 6, rng)
    assert views.shape == (10, 6, 3) and labels.shape == (10,)
    assert_param_error(GaussianMixture.make, 1, param="n_classes")


def test_digits_views_are_distinct_images_of_one_class():
    parts = digits_split(0)
    sizes = [len(parts[k][1]) for k in ("train", "cal", "test")]
    assert sum(sizes) == 1797 and abs(sizes[0] - 0.4 * 1797) < 2
    X_pool, y_pool = parts["test"]
    X, y = same_class_views(X_pool, y_pool, 5, 40, np.random.default_rng(0))
    for views, label in zip(X, y, strict=True):
        rows = [np.flatnonzero((X_pool == v).all(1)) for v in views]
        assert all(len(r) >= 1 and (y_pool[r] == label).all() for r in rows)
        assert len({tuple(v) for v in views}) == 5 or len({r[0] for r in rows}) < 5  # duplicates
    assert_param_error(
        same_class_views, X_pool, y_pool, 500, 3, np.random.default_rng(0), param="m"
    )


def test_plantnet_style_varies_the_number_of_views():
    setting = PlantNetStyle.make(seed=0)
    views, y = setting.observations(3000, np.random.default_rng(0))
    m = np.array([len(v) for v in views])
    assert m.min() == 1 and m.max() == setting.m_max
    assert 0.4 < np.mean(m == 1) < 0.6 and 1.7 < m.mean() < 2.3  # geometric, success 0.5
    counts = setting.calibration_counts()
    assert counts.min() >= setting.n_min and counts[0] > 10 * counts[-1] / 2  # long tail
    assert np.bincount(y, minlength=30)[0] > np.bincount(y, minlength=30)[-1]
