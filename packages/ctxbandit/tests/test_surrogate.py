import itertools

import numpy as np

from ctxbandit import ReductionBandit
from ctxbandit.envs import FiniteActionEnv
from ctxbandit.exp2 import build_surrogate, loss_estimate
from ctxbandit.oracles import Oracle


def _contexts(rng, n, d=7, k=3):
    out = []
    for _ in range(n):
        mask = rng.random(d) < 0.6
        mask[rng.choice(d, k, replace=False)] = True
        out.append({"mask": mask, "k": k})
    return out


def _brute(context, theta):
    avail = np.flatnonzero(context["mask"])
    best = min(itertools.combinations(avail, context["k"]), key=lambda c: theta[list(c)].sum())
    a = np.zeros(theta.size)
    a[list(best)] = 1
    return a


def test_g_hat_is_the_mean_of_brute_force_argmins():
    rng = np.random.default_rng(0)
    contexts = _contexts(rng, 30)
    thetas = rng.standard_normal((12, 7))
    s = build_surrogate(Oracle("topk"), contexts, thetas)
    for m, theta in enumerate(thetas):
        brute = np.array([_brute(c, theta) for c in contexts])
        np.testing.assert_allclose(s.Phi[m], brute.mean(0), atol=1e-14)
        np.testing.assert_allclose(s.C[m], brute.T @ brute / len(contexts), atol=1e-14)


def test_estimator_is_unbiased_under_the_empirical_context_law():
    # E[y_hat] = Sigma^{-1} E[a a^T] y = y when A ~ uniform(B_k), reg = 0 (paper, Sec. 3)
    rng = np.random.default_rng(1)
    d, n_draws = 7, 200_000
    contexts = _contexts(rng, 50, d)
    thetas = rng.standard_normal((40, d))
    s = build_surrogate(Oracle("topk"), contexts, thetas)
    p = rng.dirichlet(np.ones(40))
    y = rng.uniform(0, 1 / 3, d)
    X = Oracle("topk").batch(contexts, thetas)  # (M, N, d)
    idx_t = rng.choice(40, n_draws, p=p)
    idx_a = rng.integers(50, size=n_draws)
    a = X[idx_t, idx_a]
    loss = a @ y + 0.1 * rng.standard_normal(n_draws)
    Sigma = np.tensordot(p, s.C, axes=1)
    y_hat = np.linalg.solve(Sigma, (a * loss[:, None]).T).T
    np.testing.assert_allclose(
        loss_estimate(p, s.C, a[0], loss[0], 0.0), y_hat[0], rtol=1e-10, atol=1e-12
    )
    se = y_hat.std(0, ddof=1) / np.sqrt(n_draws)
    assert np.all(np.abs(y_hat.mean(0) - y) < 4 * se), (y_hat.mean(0) - y) / se


def test_surrogate_uses_only_contexts_of_earlier_epochs():
    """A logging oracle: every oracle call in round t other than the one act call must see a
    context from a round before the start of t's epoch (no look-ahead)."""
    env = FiniteActionEnv(d=3, K=4, T=40, seed=0)
    round_of = {env.context(t).tobytes(): t for t in range(env.T)}
    log: list[tuple[int, int]] = []
    state = {"t": 0}

    def oracle(context, theta):
        log.append((state["t"], round_of[np.asarray(context).tobytes()]))
        A = np.asarray(context)
        return A[np.argmin(A @ theta)]

    alg = ReductionBandit(d=3, oracle=oracle, n_policies=10, random_state=0)
    for t in range(env.T):
        state["t"] = t
        a = alg.act(env.context(t))
        alg.update(env.loss(t, a))
    for t in range(env.T):
        r = t + 1  # 1-based round; its epoch starts at 2^{floor(log2 r)}
        start = 1 << (r.bit_length() - 1)
        seen = [c for (when, c) in log if when == t]
        assert sum(c == t for c in seen) == 1  # the act call on the real context
        assert all(c + 1 < start for c in seen if c != t)
        if r == start and r > 1:  # the build: each earlier context once per policy
            assert sorted({c for c in seen if c != t}) == list(range(start - 1))
