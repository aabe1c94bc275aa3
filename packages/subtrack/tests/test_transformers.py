"""SubTrack++ on Hugging Face models as a user has them: a checkpoint on disk loaded with
``from_pretrained``, and ``transformers.Trainer`` driving our optimizer and scheduler."""

import pytest
import torch
import transformers

from subtrack import SubTrackAdamW, make_param_groups, synthetic_corpus, tiny_llama

PROJECTIONS = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}


def _windows(n, ctx, seed):
    data = synthetic_corpus(n * (ctx + 1), seed=seed)
    return data.view(n, ctx + 1)


@pytest.mark.parametrize("family", ["llama", "qwen2"])
def test_trains_a_checkpoint_from_disk_without_a_mapping(tmp_path, family):
    torch.manual_seed(0)
    tiny_llama(29, dim=32, layers=2, heads=2, family=family).save_pretrained(tmp_path)
    model = transformers.AutoModelForCausalLM.from_pretrained(tmp_path)
    groups = make_param_groups(model, rank=4, update_interval=5)
    low_rank = {id(p) for p in groups[1]["params"]}
    found = {n.rsplit(".", 2)[-2] for n, p in model.named_parameters() if id(p) in low_rank}
    assert found == PROJECTIONS and len(low_rank) == 2 * 7
    opt = SubTrackAdamW(groups, lr=1e-2)
    x = _windows(8, 16, seed=1)
    losses = []
    for _ in range(20):
        loss = model(x[:, :-1], labels=x[:, :-1]).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.8 * losses[0]
    assert opt.state[groups[1]["params"][0]]["P"].shape[1] == 4  # a rank-4 basis is tracked


def test_transformers_trainer_runs_our_optimizer_and_scheduler(tmp_path):
    pytest.importorskip("accelerate")  # transformers.Trainer needs it
    torch.manual_seed(0)
    model = tiny_llama(29, dim=32, layers=1, heads=2)
    opt = SubTrackAdamW(make_param_groups(model, rank=4, update_interval=4), lr=1e-2)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 4))
    rows = [{"input_ids": w, "labels": w} for w in _windows(64, 16, seed=2)[:, :-1]]
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path),
        max_steps=24,
        per_device_train_batch_size=8,
        logging_steps=4,
        save_strategy="no",
        report_to=[],
        use_cpu=True,
        disable_tqdm=True,
    )
    trainer = transformers.Trainer(
        model=model, args=args, train_dataset=rows, optimizers=(opt, sched)
    )
    trainer.train()
    # accelerate wraps the optimizer it is given; the wrapped one is ours, stepped every step
    assert trainer.optimizer.optimizer is opt
    logged = [e["loss"] for e in trainer.state.log_history if "loss" in e]
    assert len(logged) >= 4 and logged[-1] < 0.8 * logged[0]
    p = opt.param_groups[1]["params"][0]
    assert int(opt.state[p]["step"]) == 24
