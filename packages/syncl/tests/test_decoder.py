import torch

from syncl.data import make_bev_sequences
from syncl.decoder import SharedDecoder
from syncl.tracker import QueryTracker, SynCLCriterion, train_tracker


def _inputs(seed=0, Q=6):
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(2, Q, 16, generator=g),
        torch.randn(2, 9, 16, generator=g),
        torch.randn(2, Q, 16, generator=g),
    )


def test_c_decoder_queries_are_independent():
    torch.manual_seed(0)
    dec = SharedDecoder(n_layers=2, d_model=16, n_heads=2, ff=32).eval()
    q, mem, pos = _inputs()
    q2, pos2 = q.clone(), pos.clone()
    q2[:, 1:], pos2[:, 1:] = torch.randn_like(q2[:, 1:]), torch.randn_like(pos2[:, 1:])
    with torch.no_grad():
        c1 = dec(q, mem, pos, self_attn=False)[-1]
        c2 = dec(q2, mem, pos2, self_attn=False)[-1]
        s1 = dec(q, mem, pos, self_attn=True)[-1]
        s2 = dec(q2, mem, pos2, self_attn=True)[-1]
    torch.testing.assert_close(c1[:, 0], c2[:, 0], rtol=1e-5, atol=1e-6)  # others replaced
    assert (s1[:, 0] - s2[:, 0]).abs().max() > 1e-3  # self-attention mixes the queries


def test_both_modes_are_permutation_equivariant():
    torch.manual_seed(1)
    dec = SharedDecoder(n_layers=2, d_model=16, n_heads=2, ff=32).eval()
    q, mem, pos = _inputs(1)
    perm = torch.randperm(6)
    with torch.no_grad():
        for mode in (True, False):
            out = dec(q, mem, pos, self_attn=mode)
            outp = dec(q[:, perm], mem, pos[:, perm], self_attn=mode)
            assert len(out) == 2
            torch.testing.assert_close(out[-1][:, perm], outp[-1], rtol=1e-5, atol=1e-5)


def _count_c_calls(model):
    calls = {"C": 0, "S": 0}

    def hook(module, args, kwargs, output):
        calls["C" if kwargs.get("self_attn") is False else "S"] += 1

    model.decoder.register_forward_hook(hook, with_kwargs=True)
    return calls


def test_syncl_adds_no_decoder_parameters_and_inference_never_calls_the_c_decoder():
    torch.manual_seed(0)
    model = QueryTracker(grid=16, d_model=16, n_obj_queries=4)
    n_dec = sum(p.numel() for p in model.decoder.parameters())
    assert sum(p.numel() for p in SynCLCriterion().parameters()) == 0
    X, gt = make_bev_sequences(4, n_frames=3, grid=16, seed=0)
    calls = _count_c_calls(model)
    train_tracker(model, X, gt, SynCLCriterion(), steps=1, batch_size=2, clip_len=2)
    assert calls["C"] == 2 and calls["S"] == 2  # training: one C pass per S pass
    assert sum(p.numel() for p in model.decoder.parameters()) == n_dec
    calls["C"] = calls["S"] = 0
    out = model.run_tracker(X[0])
    assert calls["C"] == 0 and calls["S"] == 3 and len(out) == 3
    # the only SynCL-specific weights: the contrastive projection
    only_icl = {n.split(".")[0] for n, p in model.named_parameters()} - {
        "encoder",
        "pos_mlp",
        "obj_content",
        "obj_ref",
        "decoder",
        "cls_head",
        "box_head",
    }
    assert only_icl == {"emb_head"}


def test_baseline_training_never_calls_the_c_decoder():
    torch.manual_seed(0)
    model = QueryTracker(grid=16, d_model=16, n_obj_queries=4)
    X, gt = make_bev_sequences(4, n_frames=3, grid=16, seed=0)
    calls = _count_c_calls(model)
    train_tracker(
        model, X, gt, SynCLCriterion(False, False, False), steps=1, batch_size=2, clip_len=2
    )
    assert calls == {"C": 0, "S": 2}


def test_training_is_deterministic_under_a_seed():
    X, gt = make_bev_sequences(4, n_frames=3, grid=16, seed=0)
    losses = []
    for _ in range(2):
        torch.manual_seed(0)
        model = QueryTracker(grid=16, d_model=16, n_obj_queries=4)
        losses.append(
            train_tracker(
                model, X, gt, SynCLCriterion(), steps=2, batch_size=2, clip_len=2, seed=3
            )["loss"]
        )
    assert losses[0] == losses[1]


def test_decoder_runs_under_autocast():
    dec = SharedDecoder(n_layers=1, d_model=16, n_heads=2, ff=32)
    q, mem, pos = _inputs()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = dec(q, mem, pos, self_attn=False)[-1]
    assert out.shape == q.shape and torch.isfinite(out.float()).all()


def test_every_query_reads_the_bev_memory_at_its_reference_point():
    # Track and object queries add the memory sampled (bilinearly) at their reference point to
    # their content, so a track query with an empty content still sees its object. The
    # reference here is the centre of memory cell (row 2, col 5) of the 8x8 memory: the sample
    # is that cell exactly (bilinear weights 1, 0, 0, 0).
    torch.manual_seed(0)
    model = QueryTracker(grid=16, d_model=16, n_obj_queries=4)
    memory = torch.randn(1, 64, 16)
    ref = torch.tensor([[[(5 + 0.5) / 8, (2 + 0.5) / 8]]])
    content, refs = model.queries(memory, torch.zeros(1, 1, 16), ref)
    torch.testing.assert_close(content[0, 0], memory[0, 2 * 8 + 5])
    assert refs.shape == (1, 5, 2) and torch.equal(refs[0, 0], ref[0, 0])
    with torch.no_grad():  # put object query 0 on the centre of cell (row 6, col 1)
        c = torch.tensor([(1 + 0.5) / 8, (6 + 0.5) / 8])
        model.obj_ref.weight[0] = torch.log(c / (1 - c))
    content, _ = model.queries(memory, torch.zeros(1, 1, 16), ref)
    expected = model.obj_content.weight[0] + memory[0, 6 * 8 + 1]
    torch.testing.assert_close(content[0, 1], expected, rtol=1e-5, atol=1e-5)
