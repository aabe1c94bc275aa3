"""GoRA on a Hugging Face causal LM through peft, as a user would run it: a tiny
``LlamaForCausalLM`` checkpoint on disk, GoRA on its ``q_proj``/``v_proj``, a few training steps,
then the adapter and the merged model saved and loaded with peft's and transformers' own tools."""

import peft
import torch
import transformers

from gora import apply_plan, plan_gora
from paperkit.testing import assert_close


def _tiny_llama(path):
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=40,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=32,
        tie_word_embeddings=False,
        use_cache=False,
    )
    transformers.LlamaForCausalLM(config).save_pretrained(path)
    return transformers.AutoModelForCausalLM.from_pretrained(path)


def _batches(n=4):
    gen = torch.Generator().manual_seed(3)
    # a copy task: the second half repeats the first, so attention must move information
    first = torch.randint(0, 40, (n, 8, 8), generator=gen)
    return [torch.cat([x, x], dim=1) for x in first]


def _lm_loss(model, ids):
    return model(input_ids=ids, labels=ids).loss


def test_gora_on_llama_q_v_trains_saves_and_merges(tmp_path):
    model = _tiny_llama(tmp_path / "base")
    plan = plan_gora(
        model,
        _batches(),
        _lm_loss,
        ["q_proj", "v_proj"],
        base_rank=4,
        lora_alpha=8,
        r_min=1,
        r_max=12,
        n_steps=4,
        generator=torch.Generator().manual_seed(1),
    )
    names = set(plan.ranks)
    assert names == {
        f"model.layers.{i}.self_attn.{p}" for i in range(2) for p in ("q_proj", "v_proj")
    }
    assert len(set(plan.ranks.values())) > 1  # GoRA gives the four projections different ranks
    adapted = apply_plan(model, plan, "peft")
    assert isinstance(adapted, peft.PeftModel)
    for name, rank in plan.ranks.items():
        assert adapted.get_submodule(f"base_model.model.{name}").r["default"] == rank

    opt = torch.optim.AdamW([p for p in adapted.parameters() if p.requires_grad], lr=5e-3)
    batches = _batches(8)
    before = sum(_lm_loss(adapted, b).item() for b in batches)
    for _ in range(3):
        for b in batches:
            opt.zero_grad()
            _lm_loss(adapted, b).backward()
            opt.step()
    after = sum(_lm_loss(adapted, b).item() for b in batches)
    assert after < before

    x = batches[0]
    with torch.no_grad():
        expected = adapted(input_ids=x).logits
    # the adapter alone, saved and loaded back onto the base checkpoint with peft
    adapted.save_pretrained(tmp_path / "adapter")
    base = transformers.AutoModelForCausalLM.from_pretrained(tmp_path / "base")
    reloaded = peft.PeftModel.from_pretrained(base, tmp_path / "adapter")
    with torch.no_grad():
        assert_close(reloaded(input_ids=x).logits, expected, rtol=0, atol=1e-5)
    # the merged model is a plain LlamaForCausalLM checkpoint
    adapted.merge_and_unload().save_pretrained(tmp_path / "merged")
    merged = transformers.AutoModelForCausalLM.from_pretrained(tmp_path / "merged")
    assert isinstance(merged, transformers.LlamaForCausalLM)
    with torch.no_grad():
        assert_close(merged(input_ids=x).logits, expected, rtol=0, atol=1e-4)
