import pytest

from bcvlr.paper import PAPER
from paperkit.cli import run_bench, run_reproduce
from paperkit.results import VERDICTS
from paperkit.testing import check_results_file

HEADLINE = "Behaviour cloning from videos via latent representations"


def test_reproduce_writes_a_valid_results_file(tmp_path, tiny):
    """The command's path at the smallest sizes: the claims are data, the file follows the
    schema, the table has one row per method and budget."""
    path = run_reproduce(
        PAPER,
        quick=True,
        out=tmp_path,
        overrides={"videos": 4, "budgets": [16], "episodes": 3, "config": tiny},
    )
    doc = check_results_file(path)
    claims = doc["claims"]
    assert claims[0]["statement"].startswith(HEADLINE)
    assert {c["verdict"] for c in claims} <= set(VERDICTS) and len(claims) == 2
    rows = doc["tables"]["grid"]
    assert [r["method"] for r in rows] == ["BCV-LR", "BCO", "PPO", "random"]
    assert all(r["budget"] == 16 and 0 <= r["success"] <= 1 for r in rows)
    assert (tmp_path / "bcvlr.png").read_bytes()[:4] == b"\x89PNG"


def test_bench_writes_a_valid_bench_file(tmp_path, tiny):
    path = run_bench(
        PAPER,
        quick=True,
        device="cpu",
        out=tmp_path,
        overrides={"videos": 4, "budgets": [8, 16], "episodes": 2, "config": tiny},
    )
    doc = check_results_file(path)
    assert [r["method"] for r in doc["tables"]["efficiency"]] == ["BCV-LR", "BCO", "PPO"]
    stages = doc["tables"]["stages"]
    assert len(stages) == 4 and all(r["CPU s"] >= 0 for r in stages)
    assert all(r["steps / CPU s"] > 0 for r in doc["tables"]["envs"])
    assert {c["verdict"] for c in doc["claims"]} <= set(VERDICTS)


@pytest.mark.slow
def test_latent_actions_carry_action_information():
    """Check 9: after the small preset's stages 1a and 1b (300 steps each) on PixelGridReach
    videos, a linear probe from la to the
    true action on held-out labelled clips beats chance (the majority class) by >= 20 points."""
    import gymnasium as gym
    import torch

    from bcvlr import BCVLR, BCVLRConfig, expert_dataset
    from bcvlr.data import VideoClips

    cfg = BCVLRConfig.small().replace(policy_steps=0)  # stages 1a and 1b only
    agent = BCVLR((3, 32, 32), gym.spaces.Discrete(5), config=cfg, seed=0)
    train, test = (
        expert_dataset("bcvlr/PixelGridReach-v0", n, seed=s) for n, s in ((80, 0), (40, 5000))
    )
    agent.pretrain(train.videos)
    feats = []
    for data in (train, test):
        clips = VideoClips(data.videos)
        n, t = clips.index.unbind(1)
        agent.idm.eval()
        with torch.no_grad():
            la = agent.idm(clips.clips(torch.arange(len(clips)))).la
        feats.append((la, data.actions[n, t]))
    (x, y), (xt, yt) = feats
    mu, sd = x.mean(0), x.std(0) + 1e-6
    probe = torch.nn.Linear(x.shape[1], 5)
    opt = torch.optim.Adam(probe.parameters(), lr=1e-2)
    for _ in range(300):
        loss = torch.nn.functional.cross_entropy(probe((x - mu) / sd), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    acc = float((probe((xt - mu) / sd).argmax(-1) == yt).float().mean())
    chance = float(torch.bincount(yt, minlength=5).max()) / len(yt)
    assert acc >= chance + 0.20, (acc, chance)
