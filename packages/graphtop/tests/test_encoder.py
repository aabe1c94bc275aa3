import torch
from torch_geometric.utils import to_undirected

from graphtop import GCNEncoder, build_target_subgraphs, make_csbm
from paperkit.testing import assert_close, assert_param_error


def test_zero_weight_equals_removed_edge():
    """GCN normalisation with edge weights: a weight-0 candidate edge is an absent edge."""
    torch.manual_seed(0)
    data = make_csbm(200, 3, 8, 6.0, 0.5, 1.0, seed=1)
    enc = GCNEncoder(8, 16, 16).double()
    (sub,) = build_target_subgraphs(data, [5])
    x = sub.x.double()
    g = torch.Generator().manual_seed(0)
    m = torch.randint(0, 2, (int(sub.cand_mask.sum()) // 2,), generator=g).double()
    w = sub.edge_weight.double().clone()
    w[sub.cand_mask] = m.repeat_interleave(2)
    t = int(sub.target)
    weighted = enc(x, sub.edge_index, w)[t]
    removed = enc(x, sub.edge_index[:, w > 0])[t]
    assert_close(weighted, removed, rtol=1e-12, atol=1e-12)
    assert 0 < int(m.sum()) < m.numel()  # both kept and dropped candidates were exercised


def test_output_shape_and_message_prompts():
    enc = GCNEncoder(5, 7, 3, num_layers=3)
    x = torch.randn(4, 5)
    ei = to_undirected(torch.tensor([[0, 1, 2], [1, 2, 3]]))
    assert enc(x, ei).shape == (4, 3)
    zeros = [torch.zeros(1, conv.in_channels) for conv in enc.convs]
    assert torch.equal(enc(x, ei, message_prompts=zeros), enc(x, ei))
    first = [torch.ones(1, 5), torch.zeros(1, 7), torch.zeros(1, 7)]
    assert torch.allclose(enc(x, ei, message_prompts=first), enc(x + 1, ei))


def test_bad_widths():
    assert_param_error(GCNEncoder, 0, param="in_dim")
    assert_param_error(GCNEncoder, 3, num_layers=0, param="num_layers")
