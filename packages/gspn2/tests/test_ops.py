import pytest
import torch

from gspn2.ops import DIRECTIONS, gspn_4dir, gspn_affinity, gspn_scan, normalize_weights
from paperkit.testing import assert_close, assert_param_error, check_seeded_determinism, gradcheck64


@pytest.mark.parametrize("G", [1, 2, 4])
@pytest.mark.parametrize("chunk", [None, 3])
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_scan_equals_reference(scan_inputs, G, chunk, direction):
    """The vectorised line loop equals the per-pixel definition (fp64, 1e-12)."""
    axis = -2 if direction in ("lr", "rl") else -1
    x, w_m, w_0, w_p, lam = scan_inputs(C=4, H=5, W=7, G=G, axis=axis)
    kw = dict(chunk=chunk, direction=direction)
    fast = gspn_scan(x, w_m, w_0, w_p, lam, backend="scan", **kw)
    slow = gspn_scan(x, w_m, w_0, w_p, lam, backend="reference", **kw)
    assert_close(fast, slow, rtol=1e-12, atol=1e-12)
    assert fast.abs().max() > 0.1  # a scan that propagates something


def test_first_steps_by_hand():
    """h at columns 0 and 1 of a 2x2 map, written out from the recurrence."""
    x = torch.tensor([[[[1.0, 2.0], [3.0, 4.0]]]], dtype=torch.float64)
    lam = torch.full_like(x, 0.5)
    w_m = torch.tensor([[[[0.0, 0.0], [0.0, 0.3]]]], dtype=torch.float64)
    w_0 = torch.tensor([[[[1.0, 0.6], [1.0, 0.7]]]], dtype=torch.float64)
    w_p = torch.tensor([[[[0.0, 0.4], [0.0, 0.0]]]], dtype=torch.float64)
    h0 = [0.5 * 1.0, 0.5 * 3.0]
    h1 = [0.5 * 2.0 + 0.6 * h0[0] + 0.4 * h0[1], 0.5 * 4.0 + 0.3 * h0[0] + 0.7 * h0[1]]
    expected = torch.tensor([[[[h0[0], h1[0]], [h0[1], h1[1]]]]], dtype=torch.float64)
    for backend in ("reference", "scan"):
        assert_close(
            gspn_scan(x, w_m, w_0, w_p, lam, backend=backend), expected, rtol=1e-14, atol=0
        )


def test_normalize_weights_is_row_stochastic():
    raw = torch.randn(3, 2, 3, 6, 5, dtype=torch.float64)
    for axis in (-2, -1):
        w_m, w_0, w_p = normalize_weights(*raw, axis=axis)
        assert_close(w_m + w_0 + w_p, torch.ones_like(w_m), rtol=0, atol=1e-12)
        assert (w_m >= 0).all() and (w_0 >= 0).all() and (w_p >= 0).all()
        assert (w_m.select(axis, 0) == 0).all() and (w_p.select(axis, -1) == 0).all()
        assert (w_m.narrow(axis, 1, 4) > 0).all()


@pytest.mark.parametrize("direction", DIRECTIONS)
def test_propagation_of_ones_is_one_everywhere(direction):
    """x = λ = 1 on the first line only gives h = 1 everywhere (boundary-aware normalisation
    keeps every row sum 1); with chunk=k, h = 0 after the first chunk."""
    B, C, H, W = 1, 2, 6, 7
    horizontal = direction in ("lr", "rl")
    raw = torch.randn(3, B, 1, H, W, dtype=torch.float64)
    w = normalize_weights(*raw, axis=-2 if horizontal else -1)
    first = {
        "lr": (..., 0),
        "rl": (..., -1),
        "tb": (..., 0, slice(None)),
        "bt": (..., -1, slice(None)),
    }
    x = torch.zeros(B, C, H, W, dtype=torch.float64)
    x[first[direction]] = 1.0
    lam = x.clone()
    h = gspn_scan(x, *w, lam, backend="scan", direction=direction)
    assert_close(h, torch.ones_like(h), rtol=0, atol=1e-12)
    h = gspn_scan(x, *w, lam, chunk=3, backend="scan", direction=direction)
    lines = torch.arange(W if horizontal else H)
    if direction in ("rl", "bt"):
        lines = lines.flip(0)
    inside = (lines < 3).to(torch.float64)
    expected = inside.view(1, 1, 1, -1) if horizontal else inside.view(1, 1, -1, 1)
    assert_close(h, expected.expand_as(h), rtol=0, atol=1e-12)


def test_stability_bound(scan_inputs):
    """||h_i||_inf <= ||h_{i-1}||_inf + ||lam_i x_i||_inf for every column i."""
    x, w_m, w_0, w_p, lam = scan_inputs(B=1, C=3, H=8, W=30)
    h = gspn_scan(x, w_m, w_0, w_p, lam, backend="scan")
    for i in range(1, 30):
        bound = h[..., i - 1].abs().amax() + (lam * x)[..., i].abs().amax()
        assert h[..., i].abs().amax() <= bound + 1e-12


@pytest.mark.parametrize("chunk", [None, 2])
def test_affinity_matches_scan(scan_inputs, chunk):
    """G @ vec(x) = vec(u ⊙ h), vec column by column; G block lower-triangular, entries in
    [0, 1] for λ, u in [0, 1]."""
    H, W = 4, 5
    x, w_m, w_0, w_p, lam = scan_inputs(B=1, C=1, H=H, W=W)
    u = torch.rand(1, 1, H, W, dtype=torch.float64)
    h = gspn_scan(x, w_m, w_0, w_p, lam, chunk=chunk, backend="scan")
    G = gspn_affinity(w_m, w_0, w_p, lam, u, chunk=chunk)
    vec = x[0, 0].T.reshape(-1)  # index i * H + r
    assert_close(G @ vec, (u * h)[0, 0].T.reshape(-1), rtol=1e-12, atol=1e-12)
    for i in range(W):
        for j in range(i + 1, W):
            assert (G[i * H : (i + 1) * H, j * H : (j + 1) * H] == 0).all()
    assert (G >= 0).all() and (G <= 1).all()
    if chunk:  # no propagation across the chunk boundary between columns 1 and 2
        assert (G[2 * H :, : 2 * H] == 0).all()
    # u = 1 gives h itself
    ones = torch.ones(H, W, dtype=torch.float64)
    G1 = gspn_affinity(w_m[0, 0], w_0[0, 0], w_p[0, 0], lam[0, 0], ones, chunk=chunk)
    assert_close(G1 @ vec, h[0, 0].T.reshape(-1), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("backend", ["reference", "scan"])
def test_causality(scan_inputs, backend):
    """Causality of the → scan: changing column j leaves every column < j bit-identical."""
    x, w_m, w_0, w_p, lam = scan_inputs(B=1, C=2, H=4, W=6)
    j = 3
    x2 = x.clone()
    x2[..., j] += 1.0
    a = gspn_scan(x, w_m, w_0, w_p, lam, backend=backend)
    b = gspn_scan(x2, w_m, w_0, w_p, lam, backend=backend)
    assert torch.equal(a[..., :j], b[..., :j])
    assert not torch.equal(a[..., j:], b[..., j:])


def test_shared_equals_equal_per_channel(scan_inputs):
    """Per-channel weights equal across channels give the G=1 result."""
    x, w_m, w_0, w_p, lam = scan_inputs(C=4, G=1)
    shared = gspn_scan(x, w_m, w_0, w_p, lam, backend="scan")
    per = [w.expand(-1, 4, -1, -1) for w in (w_m, w_0, w_p)]
    assert_close(gspn_scan(x, *per, lam, backend="scan"), shared, rtol=1e-14, atol=1e-14)


def test_direction_bookkeeping(scan_inputs):
    """← = flip(→ on flipped input and weights); ↓ = transpose of → on the transposed input and
    weights (H != W); ↑ = flip of ↓ on flipped rows."""
    x, w_m, w_0, w_p, lam = scan_inputs(C=3, H=5, W=7, G=1)
    ts = (x, w_m, w_0, w_p, lam)
    left = gspn_scan(*ts, backend="scan", direction="rl")
    via = gspn_scan(*(t.flip(-1) for t in ts), backend="scan").flip(-1)
    assert_close(left, via, rtol=1e-13, atol=1e-13)
    xv, *wv, lv = scan_inputs(C=3, H=5, W=7, G=1, axis=-1, seed=1)
    tv = (xv, *wv, lv)
    down = gspn_scan(*tv, backend="scan", direction="tb")
    via = gspn_scan(*(t.transpose(-1, -2) for t in tv), backend="scan").transpose(-1, -2)
    assert_close(down, via, rtol=1e-13, atol=1e-13)
    up = gspn_scan(*tv, backend="scan", direction="bt")
    via = gspn_scan(*(t.flip(-2) for t in tv), backend="scan", direction="tb").flip(-2)
    assert_close(up, via, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("chunk", [None, 2])
def test_gradcheck_scan_path(scan_inputs, direction, chunk):
    """gradcheck (fp64) of the autograd Function (the adjoint scan), G=1 and G=C."""
    for G in (1, 2):
        x, w_m, w_0, w_p, lam = scan_inputs(B=1, C=2, H=3, W=4, G=G)
        assert gradcheck64(
            lambda *a: gspn_scan(*a, chunk=chunk, backend="scan", direction=direction),
            x,
            w_m,
            w_0,
            w_p,
            lam,
        )


@pytest.mark.parametrize("G", [1, 2])
def test_adjoint_matches_autograd_of_reference(scan_inputs, G):
    """The analytic adjoint (g_t = dL/dh_t + W_{t+1}^T g_{t+1}, dw = Σ_c g h_{t-1}) equals plain
    autograd through the per-pixel definition."""
    x, w_m, w_0, w_p, lam = scan_inputs(B=2, C=2, H=3, W=5, G=G)
    leaves = [t.requires_grad_() for t in (x, w_m, w_0, w_p, lam)]
    cotangent = torch.randn(2, 2, 3, 5, dtype=torch.float64)
    for direction in DIRECTIONS:
        kw = dict(chunk=3, direction=direction)
        fast = torch.autograd.grad(gspn_scan(*leaves, backend="scan", **kw), leaves, cotangent)
        slow = torch.autograd.grad(gspn_scan(*leaves, backend="reference", **kw), leaves, cotangent)
        for a, b in zip(fast, slow, strict=True):
            assert_close(a, b, rtol=1e-12, atol=1e-12)


def test_four_directions_scan_equals_reference(four_dir_inputs):
    inputs = four_dir_inputs(C=4, H=5, W=6, G=2)
    fast = gspn_4dir(**inputs, chunk=4, backend="scan")
    slow = gspn_4dir(**inputs, chunk=4, backend="reference")
    assert_close(fast, slow, rtol=1e-12, atol=1e-12)


def test_four_directions_merge(four_dir_inputs):
    """A one-hot mix picks one direction: u ⊙ h + d ⊙ x of that scan; dicts equal 5-D tensors."""
    inputs = four_dir_inputs(C=2, H=4, W=5)
    x = inputs["x"]
    for k, direction in enumerate(DIRECTIONS):
        mix = torch.zeros(4, dtype=torch.float64)
        mix[k] = 1.0
        y = gspn_4dir(**{**inputs, "mix": mix}, backend="scan")
        h = gspn_scan(x, *inputs["weights"][direction], inputs["lam"][:, k], direction=direction)
        assert_close(y, inputs["u"][:, k] * h + inputs["d"][:, k] * x, rtol=1e-13, atol=1e-13)
    as_dicts = {
        key: dict(zip(DIRECTIONS, inputs[key].unbind(1), strict=True)) for key in ("lam", "u", "d")
    }
    assert_close(gspn_4dir(**{**inputs, **as_dicts}), gspn_4dir(**inputs), rtol=0, atol=0)


def test_four_directions_gradcheck(four_dir_inputs):
    inputs = four_dir_inputs(B=1, C=2, H=3, W=4)
    names = ["x", "lam", "u", "d", "mix"]

    def fn(x, lam, u, d, mix, *w):
        weights = {dr: tuple(w[3 * k : 3 * k + 3]) for k, dr in enumerate(DIRECTIONS)}
        return gspn_4dir(x, weights, lam, u, d, mix, chunk=3, backend="scan")

    flat_w = [w for dr in DIRECTIONS for w in inputs["weights"][dr]]
    assert gradcheck64(fn, *(inputs[n] for n in names), *flat_w, fast_mode=True)


def test_auto_is_scan_on_cpu(scan_inputs):
    ts = scan_inputs(dtype=torch.float32)
    assert torch.equal(gspn_scan(*ts), gspn_scan(*ts, backend="scan"))


def test_keeps_dtype_and_accepts_non_contiguous(scan_inputs):
    x, w_m, w_0, w_p, lam = scan_inputs(dtype=torch.float32, H=6, W=6)
    h = gspn_scan(x, w_m, w_0, w_p, lam)
    assert h.dtype == torch.float32
    xt, lt = x.transpose(-1, -2).contiguous().transpose(-1, -2), lam.mT.contiguous().mT
    assert not xt.is_contiguous()
    assert torch.equal(gspn_scan(xt, w_m, w_0, w_p, lt), h)


def test_seeded_determinism(four_dir_inputs):
    def run():
        inputs = four_dir_inputs(seed=int(torch.randint(0, 1000, ())))
        return gspn_4dir(**inputs)

    check_seeded_determinism(run)


# Bad inputs name the argument (the shared suite is in test_bad_inputs.py; these are the cases
# it does not derive).


def test_bad_scan_inputs(scan_inputs):
    x, w_m, w_0, w_p, lam = scan_inputs(C=4, G=1)
    w3 = torch.rand(2, 3, 5, 7, dtype=torch.float64)  # G = 3 does not divide C = 4
    assert_param_error(gspn_scan, x, w3, w3, w3, lam, param="w_m")
    assert_param_error(gspn_scan, x, w_m, w_0, w_p[:, :, :4], lam, param="w_p")


@pytest.mark.parametrize("backend", ["cuda", "cuda_multilaunch"])
def test_cuda_backend_cannot_run_on_cpu_tensors(scan_inputs, backend):
    ts = scan_inputs(dtype=torch.float32)
    err = assert_param_error(gspn_scan, *ts, backend=backend, param="backend")
    assert "a backend that can run here" in str(err)


def test_other_inputs_take_the_dtype_of_x(scan_inputs):
    x, w_m, w_0, w_p, lam = scan_inputs()
    mixed = gspn_scan(x, w_m.float(), w_0, w_p.float(), lam, backend="scan")
    assert mixed.dtype == torch.float64
    assert torch.equal(mixed, gspn_scan(x, w_m.float().double(), w_0, w_p.float().double(), lam))


def test_bad_4dir_inputs(four_dir_inputs):
    inputs = four_dir_inputs()
    missing = {k: v for k, v in inputs["weights"].items() if k != "bt"}
    assert_param_error(gspn_4dir, **{**inputs, "weights": missing}, param="weights")
    bad = dict(inputs["weights"], lr=inputs["weights"]["lr"][:2])
    assert_param_error(gspn_4dir, **{**inputs, "weights": bad}, param='weights["lr"]')
    short = dict(inputs["weights"], tb=tuple(w[..., :3] for w in inputs["weights"]["tb"]))
    assert_param_error(gspn_4dir, **{**inputs, "weights": short}, param='weights["tb"][0]')
    as_dict = dict(zip(DIRECTIONS, inputs["lam"].unbind(1), strict=True))
    as_dict["bt"] = as_dict["bt"][:1]
    assert_param_error(gspn_4dir, **{**inputs, "lam": as_dict}, param='lam["bt"]')
    del as_dict["bt"]
    assert_param_error(gspn_4dir, **{**inputs, "lam": as_dict}, param="lam")


def test_affinity_refuses_a_plane_too_large_for_memory(monkeypatch):
    monkeypatch.setenv("PAPERKIT_MAX_BYTES", str(2**20))
    plane = torch.rand(20, 20, dtype=torch.float64)  # (400², float64) = 1.2 MiB
    err = assert_param_error(gspn_affinity, plane, plane, plane, plane, plane, param="w_m")
    assert "fit in memory" in str(err)
