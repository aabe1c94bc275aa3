"""Stage 1: patching and shapes, masking, the prompt pool, determinism."""

import pytest
import torch

from factost import PromptPool, TemporalBackbone


@pytest.mark.parametrize(("L", "P", "H"), [(12, 2, 12), (24, 4, 24), (48, 4, 6), (24, 3, 5)])
def test_output_shapes(L, P, H):
    f = TemporalBackbone(L, H, P, d_model=16, layers=1, heads=2, n_domains=3, prompt_tokens=4)
    out = f(torch.randn(5, L))
    T_p = L // P
    assert out["forecast"].shape == (5, H)
    assert out["bands"].shape == (5, 3, L)
    assert out["tokens"].shape == (5, T_p + 4, 16)
    assert out["weights"].shape == (5, 3)


def test_masking_replaces_exactly_round_ratio_tokens():
    f = TemporalBackbone(40, 8, 4, d_model=16, layers=1, heads=2)  # T_p = 10
    xn = torch.randn(7, 40)
    clean, none = f.embed_patches(xn, 0.0)
    masked, mask = f.embed_patches(xn, 0.4)
    assert not none.any()
    assert (mask.sum(1) == round(0.4 * 10)).all()
    is_mask_token = (masked == f.mask_token).all(-1)
    assert torch.equal(is_mask_token, mask)
    assert torch.equal(masked[~mask], clean[~mask])
    again, _ = f.embed_patches(xn, 0.0)
    assert torch.equal(again, clean)  # mask_ratio=0 leaves the tokens unchanged


def test_prompt_weights_sum_to_one_and_single_domain_gives_its_prompt():
    pool = PromptPool(5, 4, 8)
    prompt, a = pool(torch.randn(9, 8))
    assert torch.allclose(a.sum(-1), torch.ones(9))
    single = PromptPool(1, 4, 8)
    prompt, a = single(torch.randn(3, 8))
    assert torch.allclose(a, torch.ones(3, 1))
    assert torch.allclose(prompt, single.prompts[0].expand(3, 4, 8))


def test_key_loss_is_minus_log_weight_of_true_domain():
    pool = PromptPool(3, 2, 4)
    a = pool.weights(torch.randn(6, 4))
    dom = torch.tensor([0, 1, 2, 0, 1, 2])
    expected = -torch.log(a[torch.arange(6), dom]).mean()
    assert torch.allclose(pool.key_loss(a, dom), expected)


def test_pretrain_loss_decreases_and_is_deterministic():
    def run():
        torch.manual_seed(0)
        f = TemporalBackbone(12, 4, 2, d_model=16, layers=1, heads=2, n_domains=2, dropout=0.0)
        x = torch.sin(torch.arange(32 * 16).reshape(32, 16) * 0.5)
        dom = torch.arange(32) % 2
        opt = torch.optim.Adam(f.parameters(), lr=1e-2)
        losses = []
        for _ in range(15):
            loss = f.pretrain_loss(x[:, :12], x[:, 12:], dom)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses

    first, second = run(), run()
    assert first == second  # determinism under a seed
    assert first[-1] < 0.5 * first[0]
