"""Our fits against the field's tools on the same matrices: weightwatcher (KS fit over all
xmin, its default ``pl_package="ww"``) and the powerlaw package (continuous MLE at a fixed xmin,
which is the Hill estimator of the "median" fit)."""

import numpy as np
import pytest
import torch
from torch import nn

from alphadecay import esd_eigenvalues, pl_alpha_hill, pl_fit


def _heavy_tailed_model():
    torch.manual_seed(0)
    shapes = [(200, 100), (300, 150), (256, 256)]
    layers = []
    for i, (m, n) in enumerate(shapes):
        layer = nn.Linear(n, m, bias=False)
        with torch.no_grad():
            layer.weight.copy_(torch.distributions.StudentT(2.5 + i).sample((m, n)))
        layers.append(layer)
    return nn.Sequential(*layers)


@pytest.mark.filterwarnings("ignore:Passing a dict to DataFrame")
def test_ks_fit_matches_weightwatcher():
    ww = pytest.importorskip("weightwatcher")
    model = _heavy_tailed_model()
    details = ww.WeightWatcher(model=model).analyze(plot=False, randomize=False, mp_fit=False)
    assert len(details) == 3
    for layer, (_, row) in zip(model, details.iterrows(), strict=True):
        fit = pl_fit(layer.weight.double(), method="ks")  # ww fits in float64
        assert fit.alpha == pytest.approx(row["alpha"], rel=1e-6)
        assert fit.xmin == pytest.approx(row["xmin"], rel=1e-5)
        assert pytest.approx(row["D"], rel=1e-5) == fit.D


def test_median_fit_matches_powerlaw_mle_at_fixed_xmin():
    powerlaw = pytest.importorskip("powerlaw")
    for layer in _heavy_tailed_model():
        eigs = esd_eigenvalues(layer.weight.double()).numpy()
        xmin = eigs[len(eigs) // 2]
        fit = powerlaw.Fit(eigs, xmin=xmin, verbose=False)
        assert pl_alpha_hill(layer.weight.double()) == pytest.approx(fit.power_law.alpha, rel=1e-9)
        assert np.isclose(pl_fit(layer.weight.double()).xmin, xmin)
