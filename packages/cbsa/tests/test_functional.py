"""contract_broadcast against an explicit per-head loop, its special cases (paper Sec. 3.3) and
its invariants."""

import torch

from cbsa.functional import contract_broadcast
from conftest import rand
from paperkit.testing import assert_close

B, H, N, m, p = 2, 3, 11, 4, 5


def loop_reference(w, reps0, step_rep, step_x, scale, assignment=None):
    """The three steps of Sec. 3 written per batch element and head, with explicit softmaxes."""
    out = torch.empty_like(w)
    A_all = torch.empty(w.shape[0], w.shape[1], reps0.shape[2], w.shape[2], dtype=w.dtype)
    for b in range(w.shape[0]):
        for k in range(w.shape[1]):
            W, Q0 = w[b, k], reps0[b, k]
            if assignment is None:
                S = Q0 @ W.T * scale
                E = torch.exp(S - S.max(dim=1, keepdim=True).values)
                A = E / E.sum(dim=1, keepdim=True)
            else:
                A = assignment[b, k]
            Q = Q0 + step_rep[k] * A @ W
            G = Q @ Q.T * scale
            P = torch.exp(G - G.max(dim=1, keepdim=True).values)
            C = (P / P.sum(dim=1, keepdim=True)) @ Q
            out[b, k] = step_x[k] * A.T @ C
            A_all[b, k] = A
    return out, A_all


def test_matches_per_head_loop_fp64():
    w, reps0 = rand(B, H, N, p, seed=1), rand(B, H, m, p, seed=2)
    s_rep, s_x = rand(H, seed=3), rand(H, seed=4)
    out, A = contract_broadcast(w, reps0, s_rep, s_x)
    ref, A_ref = loop_reference(w, reps0, s_rep, s_x, p**-0.5)
    assert_close(out, ref, rtol=1e-10, atol=1e-12)
    assert_close(A, A_ref, rtol=1e-10, atol=1e-12)
    out2, _ = contract_broadcast(w, reps0, s_rep, s_x, scale=0.7)
    assert_close(out2, loop_reference(w, reps0, s_rep, s_x, 0.7)[0], rtol=1e-10, atol=1e-12)


def test_mssa_special_case_is_exact():
    # reps0 = W, A = I_N, step_rep = 0: CBSA = softmax(W W^T scale) W * step_x (Sec. 3.3)
    w = rand(B, H, N, p, seed=5)
    s_x = rand(H, seed=6)
    eye = torch.eye(N, dtype=w.dtype).expand(B, H, N, N)
    out, A = contract_broadcast(w, w, torch.zeros(H, dtype=w.dtype), s_x, assignment=eye)
    mssa = torch.softmax(w @ w.transpose(-1, -2) * p**-0.5, dim=-1) @ w * s_x.view(-1, 1, 1)
    assert torch.equal(A, eye)
    assert_close(out, mssa, rtol=1e-13, atol=1e-14)


def test_broadcast_has_rank_at_most_m():
    w, reps0 = rand(1, 2, 200, 8, seed=7), rand(1, 2, 4, 8, seed=8)
    out, _ = contract_broadcast(
        w, reps0, torch.ones(2, dtype=w.dtype), torch.ones(2, dtype=w.dtype)
    )
    for k in range(2):
        s = torch.linalg.svdvals(out[0, k])
        assert s[4] < 1e-8 * s[0], s  # out = A^T C with A^T (200 x 4): rank <= m = 4


def test_assignment_is_row_stochastic():
    w, reps0 = rand(B, H, N, p, seed=9), rand(B, H, m, p, seed=10)
    _, A = contract_broadcast(w, reps0, rand(H, seed=11), rand(H, seed=12))
    assert A.shape == (B, H, m, N)
    assert bool((A > 0).all())
    assert_close(A.sum(-1), torch.ones(B, H, m, dtype=w.dtype), rtol=0, atol=1e-14)


def test_one_uniform_representative_gives_every_token_the_same_update():
    w, reps0 = rand(B, H, N, p, seed=13), rand(B, H, 1, p, seed=14)
    uniform = torch.full((B, H, 1, N), 1.0 / N, dtype=w.dtype)
    out, _ = contract_broadcast(w, reps0, rand(H, seed=15), rand(H, seed=16), assignment=uniform)
    assert_close(out, out[:, :, :1].expand_as(out), rtol=1e-13, atol=1e-15)
    # the shared row is (1/N) * step_x * (reps0 + step_rep * mean(W)): softmax of a 1x1 is 1
    # (the rows differ from one another across heads, as each head contracts its own subspace)
    assert not torch.allclose(out[:, 0, 0], out[:, 1, 0])


def test_rotation_within_a_head_rotates_the_output():
    w, reps0 = rand(B, H, N, p, seed=17), rand(B, H, m, p, seed=18)
    R = torch.linalg.qr(rand(p, p, seed=19))[0]
    s_rep, s_x = rand(H, seed=20), rand(H, seed=21)
    out, A = contract_broadcast(w, reps0, s_rep, s_x)
    out_r, A_r = contract_broadcast(w @ R, reps0 @ R, s_rep, s_x)
    assert_close(A_r, A, rtol=1e-12, atol=1e-13)
    assert_close(out_r, out @ R, rtol=1e-10, atol=1e-12)


def test_gradcheck():
    w, reps0 = rand(1, 2, 6, 3, seed=22), rand(1, 2, 2, 3, seed=23)
    args = [x.requires_grad_() for x in (w, reps0, rand(2, seed=24), rand(2, seed=25))]
    assert torch.autograd.gradcheck(lambda *a: contract_broadcast(*a)[0], args)
