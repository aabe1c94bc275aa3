import torch

from shadowopacity.physics import estimate_rho, remove_shadow, render_shadow


def _inputs(seed=0, b=3, size=16):
    g = torch.Generator().manual_seed(seed)
    free = torch.rand(b, 3, size, size, generator=g, dtype=torch.float64)
    alpha = torch.rand(b, 1, size, size, generator=g, dtype=torch.float64)
    rho = 0.1 + 0.9 * torch.rand(b, 3, generator=g, dtype=torch.float64)
    return free, alpha, rho


def test_render_limits_and_range():
    free, alpha, rho = _inputs()
    assert torch.equal(render_shadow(free, torch.zeros_like(alpha), rho), free)
    umbra = render_shadow(free, torch.ones_like(alpha), rho)
    torch.testing.assert_close(umbra, rho[:, :, None, None] * free, rtol=0, atol=1e-15)
    out = render_shadow(free, alpha, rho)
    assert out.min() >= 0 and out.max() <= 1
    assert (out <= free).all()  # a shadow only darkens


def test_remove_inverts_render():
    free, alpha, rho = _inputs(1)
    img = render_shadow(free, alpha, rho)
    back = remove_shadow(img, alpha, rho, eps=1e-3)
    keep = (1 - alpha * (1 - rho[:, :, None, None])) > 1e-3
    assert (back - free).abs()[keep.expand_as(free)].max() < 1e-6


def _flat_soft_scene(rho, size=32, peak=0.6):
    """Flat background, a soft disk shadow with a linear ramp to exactly 0 (max alpha 0.6)."""
    yy, xx = torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij")
    r = ((yy - 15.5) ** 2 + (xx - 15.5) ** 2).sqrt().double()
    alpha = (peak * (1 - (r - 4) / 6).clamp(0, 1))[None, None]
    free = torch.tensor([0.8, 0.6, 0.7], dtype=torch.float64)[None, :, None, None].expand(
        1, 3, size, size
    )
    return render_shadow(free, alpha, rho), alpha, free


def test_estimate_rho_recovers_soft_shadow_on_flat_background():
    rho = torch.tensor([[0.35, 0.5, 0.65]], dtype=torch.float64)
    img, alpha, _ = _flat_soft_scene(rho)
    assert alpha.max() <= 0.6 + 1e-12 and (alpha > 0.9).sum() == 0  # no umbra at all
    est, valid = estimate_rho(img, alpha)
    assert valid.all()
    assert (est - rho).abs().max() < 0.02


def test_estimate_rho_without_shadow_is_invalid_and_one():
    img = torch.rand(2, 3, 16, 16, dtype=torch.float64)
    est, valid = estimate_rho(img, torch.zeros(2, 1, 16, 16, dtype=torch.float64))
    assert not valid.any() and torch.equal(est, torch.ones_like(est))
    assert torch.isfinite(est).all()


def test_estimate_rho_too_few_pixels_is_invalid():
    alpha = torch.zeros(1, 1, 16, 16)
    alpha[0, 0, 5:8, 5:8] = 0.8  # 9 pixels < min_pixels = 10
    img = render_shadow(torch.full((1, 3, 16, 16), 0.5), alpha, torch.full((1, 3), 0.4))
    est, valid = estimate_rho(img, alpha)
    assert not valid.any() and torch.equal(est, torch.ones(1, 3))
    est, valid = estimate_rho(img, alpha, min_pixels=9)
    assert valid.all() and (est - 0.4).abs().max() < 1e-5
