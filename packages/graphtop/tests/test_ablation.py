import itertools

import pytest
import torch

from graphtop import GCNEncoder, GraphTOP, few_shot_split, make_csbm
from graphtop.ablation import (
    SCORER_VARIANTS,
    RandomRewiring,
    load_official_encoder,
    roc_auc,
    run_cell,
    scorer_auc,
)

HIDDEN = 16


def setup(seed=0):
    data = make_csbm(120, 3, 8, 5.0, 0.8, 2.0, seed=seed)
    torch.manual_seed(seed)
    return data, GCNEncoder(8, HIDDEN, HIDDEN)


def test_roc_auc_is_the_pair_count_with_ties_half():
    g = torch.Generator().manual_seed(0)
    scores = torch.randint(0, 5, (40,), generator=g).float()  # many ties
    labels = torch.rand(40, generator=g) < 0.4
    pos, neg = scores[labels], scores[~labels]
    pairs = [(a > b) + 0.5 * (a == b) for a, b in itertools.product(pos.tolist(), neg.tolist())]
    assert roc_auc(scores, labels) == pytest.approx(sum(pairs) / len(pairs), abs=1e-12)
    assert torch.isnan(torch.tensor(roc_auc(scores, torch.zeros(40, dtype=torch.bool))))


def test_random_rewiring_keeps_p_constant_and_its_scorer_untrained():
    data, enc = setup()
    train, test = few_shot_split(data.y, shots=5, num_test=40, seed=0)
    model = RandomRewiring(enc, 3, hidden=HIDDEN, target_density=0.3)
    model.fit(data, train, epochs=3, lr=1e-2, seed=0)
    before = [p.clone() for p in model.prompt.parameters()]
    model.reset_parameters(torch.Generator().manual_seed(0))
    after_reset = [p.clone() for p in model.prompt.parameters()]
    # fit re-initialises from its seed; the scorer then receives no gradient
    assert all(torch.equal(a, b) for a, b in zip(before, after_reset, strict=True))
    stats = model.rewiring_stats(data, test, mode="sample")
    assert abs(stats["density"] - 0.3) < 0.1
    assert stats["mean_entropy"] == pytest.approx(
        -(0.3 * torch.log(torch.tensor(0.3)) + 0.7 * torch.log(torch.tensor(0.7))).item(), abs=1e-5
    )


class OracleEdges(GraphTOP):
    """p = the original adjacency: a scorer that tells edges from non-edges perfectly."""

    def candidate_probs(self, batch, h):
        cand = batch.edge_index[:, batch.cand_mask]
        return batch.edge_weight[batch.cand_mask][0::2], batch.batch[cand[1, 0::2]]


def test_scorer_auc_of_an_oracle_and_a_trained_scorer():
    data, enc = setup()
    train, test = few_shot_split(data.y, shots=5, num_test=40, seed=0)
    oracle = OracleEdges(enc, 3, hidden=HIDDEN).fit(data, train, epochs=1, seed=0)
    assert scorer_auc(oracle, data, test)["auc_edge"] == 1.0
    model = GraphTOP(enc, 3, hidden=HIDDEN).fit(data, train, epochs=3, lr=1e-2, seed=0)
    auc = scorer_auc(model, data, test)
    assert set(auc) == {"auc_edge", "auc_class"} and all(0 <= v <= 1 for v in auc.values())


def test_official_checkpoint_naming_loads_the_same_encoder(tmp_path):
    _, enc = setup()
    official = {
        k.replace("convs.0.", "conv1.").replace("convs.1.", "conv2."): v
        for k, v in enc.state_dict().items()
    }
    torch.save(official, tmp_path / "Cora_GraphCL_GCN_1.pth")
    loaded = load_official_encoder(tmp_path / "Cora_GraphCL_GCN_1.pth")
    assert (loaded.in_dim, loaded.hidden, loaded.out_dim) == (8, HIDDEN, HIDDEN)
    x, ei = torch.randn(6, 8), torch.tensor([[0, 1, 2, 3], [1, 2, 3, 4]])
    assert torch.equal(loaded(x, ei), enc(x, ei))


def test_run_cell_reports_every_variant():
    data, enc = setup()
    variants = {k: SCORER_VARIANTS[k] for k in list(SCORER_VARIANTS)[:3]}
    out = run_cell(data, enc, variants, [0], shots=5, num_test=20, epochs=2, lr=1e-2)
    assert set(out) == set(variants)
    assert all(0 <= m["acc"][0] <= 1 for m in out.values())
    assert "density" not in out["LinearProbe (original graph)"]
    assert "auc_edge" in out["GraphTOP"] and "auc_edge" not in out["random rewiring p=rho*"]


def test_arguments_are_checked_before_any_work(tmp_path):
    from graphtop.ablation import load_official_encoder, roc_auc, run

    with pytest.raises(ValueError, match="positive"):
        roc_auc(torch.rand(4), torch.ones(3, dtype=torch.bool))
    with pytest.raises(ValueError, match="path"):
        load_official_encoder(tmp_path / "missing.pth")
    with pytest.raises(ValueError, match="experiment"):
        run("other", data_root=tmp_path, out=tmp_path)
    with pytest.raises(ValueError, match="checkpoints"):
        run("official", data_root=tmp_path, out=tmp_path)
