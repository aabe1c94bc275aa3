import torch

from paperkit.testing import assert_close
from robin import ROBIN, cosine_alpha_bar, fit, step_batch


def test_cosine_schedule():
    for K in (5, 10, 20):
        ab = cosine_alpha_bar(K)
        assert ab.shape == (K + 1,) and ab[0] == 1.0
        assert (ab[1:] < ab[:-1]).all()  # decreasing in k
        assert ab[-1] < 1e-3  # pure noise at k = K


def _sim(beam, K=10):
    torch.manual_seed(0)
    sim = ROBIN(latent=8, blocks_per_level=1, levels=2, num_steps=K).double()
    sim.set_normalization(beam)
    return sim


def _oracle(sim, y, noise):
    """Replace the network by the true ε of x_k = √ᾱ y + √(1-ᾱ) ε (float64)."""
    sim.eps = lambda x, k, cond: (
        (x - sim.alpha_bar[k][:, None, None].sqrt() * y)
        / (1 - sim.alpha_bar[k][:, None, None]).sqrt()
    )


def test_ddpm_algebra_with_the_true_noise(beam):
    sim = _sim(beam)
    batch = step_batch(beam, [(0, 1), (1, 3), (2, 5)])
    cond = batch.cond
    cond.u, cond.bc, batch.u_next = cond.u.double(), cond.bc.double(), batch.u_next.double()
    y = sim.target(cond.u, batch.u_next)
    noise = torch.randn(y.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    _oracle(sim, y, noise)
    k = torch.tensor([1, 4, 9])
    ab = sim.alpha_bar[k][:, None, None]
    x_k = ab.sqrt() * y + (1 - ab).sqrt() * noise
    x_prev, x0 = sim.denoise_step(
        x_k, k, cond, generator=torch.Generator().manual_seed(1), clip=False
    )
    assert_close(x0, y, rtol=1e-10, atol=1e-10)  # x̂0 recovers y exactly
    # q-posterior mean (Ho et al. 2020, eq. 7) written out with β_k = 1 - ᾱ_k/ᾱ_{k-1}
    ab_prev = sim.alpha_bar[k - 1][:, None, None]
    beta = 1 - ab / ab_prev
    mean = (ab_prev.sqrt() * beta / (1 - ab)) * y + (
        (1 - beta).sqrt() * (1 - ab_prev) / (1 - ab)
    ) * x_k
    var = beta * (1 - ab_prev) / (1 - ab)
    got_mean, got_std = sim.posterior(x_k, y, k, k - 1)
    assert_close(got_mean, mean, rtol=1e-12, atol=1e-12)
    assert_close(got_std**2, var.expand_as(got_std), rtol=1e-12, atol=1e-15)
    z = torch.randn(y.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    assert_close(x_prev, mean + var.sqrt() * z, rtol=1e-12, atol=1e-12)
    # the last step adds no noise: x_0 = x̂0
    x_last, _ = sim.denoise_step(y * 0 + x_k, torch.tensor([1, 1, 1]), cond, clip=False)
    ab1 = sim.alpha_bar[1]
    true_eps = (x_k - ab1.sqrt() * y) / (1 - ab1).sqrt()
    assert_close(x_last, (x_k - (1 - ab1).sqrt() * true_eps) / ab1.sqrt(), rtol=1e-10, atol=1e-10)


def test_loss_ignores_dirichlet_nodes(beam):
    sim = _sim(beam).float()
    batch = step_batch(beam, [(0, 2), (3, 4)])
    k = torch.tensor([3, 7])
    noise = torch.randn(batch.u_next.shape, generator=torch.Generator().manual_seed(0))
    base = sim.loss(batch, k=k, noise=noise)
    changed = noise.clone()
    changed[batch.cond.dirichlet] += 100.0  # only the target noise on Dirichlet nodes
    assert sim.loss(batch, k=k, noise=changed) != base  # enters the input x_k...
    sim.eps = lambda x, kk, cond: noise  # ...but with ε̂ = ε on free nodes the loss is zero
    assert float(sim.loss(batch, k=k, noise=changed)) == 0.0
    free = noise.clone()
    free[~batch.cond.dirichlet] += 0.1  # a miss on the free nodes counts
    assert_close(sim.loss(batch, k=k, noise=free), torch.tensor(0.01), rtol=1e-4, atol=0)


def test_overfit_one_batch(beam):
    torch.manual_seed(0)
    sim = ROBIN(latent=16, blocks_per_level=1, levels=2, num_steps=10)
    sim.set_normalization(beam)
    batch = step_batch(beam, [(0, 1), (1, 2), (2, 3), (3, 4)])
    g = torch.Generator().manual_seed(0)
    k = torch.randint(1, 11, (4,), generator=g)
    noise = torch.randn(batch.u_next.shape, generator=g)
    opt = torch.optim.Adam(sim.parameters(), lr=3e-3)
    first = None
    for _ in range(50):
        loss = sim.loss(batch, k=k, noise=noise)
        first = loss.item() if first is None else first
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 0.5 * first


def test_fit_is_seeded(beam):
    def run():
        torch.manual_seed(0)
        sim = ROBIN(latent=8, blocks_per_level=1, levels=2, num_steps=5)
        return torch.tensor(fit(sim, beam, 3, batch_size=2, seed=3))

    a, b = run(), run()
    assert torch.equal(a, b)
