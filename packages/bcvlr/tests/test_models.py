"""Correctness checks 4, 5 and 8: shapes, the shared frozen encoder, the action decoder."""

import gymnasium as gym
import torch

from bcvlr import (
    BCVLR,
    ActionDecoder,
    BCVLRConfig,
    Encoder,
    ForwardModel,
    InverseDynamics,
    LatentPolicy,
    make_expert_videos,
)

SPACE = gym.spaces.Discrete(5)


def test_shapes_of_every_network():
    cfg = BCVLRConfig.small()
    enc = Encoder(cfg)
    idm = InverseDynamics(enc, (32, 32), cfg)
    fm = ForwardModel(enc, (32, 32), cfg)
    pi = LatentPolicy(enc, (32, 32), cfg)
    clip = torch.rand(4, 3, 3, 32, 32)
    out = idm(clip)
    assert out.la.shape == out.la_q.shape == (4, cfg.d_la) and cfg.d_la == 32
    assert out.indices.shape == (4, 2, 2) and out.vq_loss.ndim == 0
    feats = enc(clip[:, 0])
    assert feats.shape == (4, 8, 16, 16)
    pred = fm(torch.stack([feats, feats], 1), out.la_q)
    assert pred.shape == feats.shape
    assert pi(clip[:, 1]).shape == (4, cfg.d_la)
    assert ActionDecoder(cfg.d_la, 5)(out.la).shape == (4, 5)


def test_paper_preset_keeps_full_resolution_features():
    cfg = BCVLRConfig.paper()
    assert cfg.d_la == 128 and cfg.num_embs == 64 and cfg.wm_loss_alpha == 15.0
    assert Encoder(cfg)(torch.rand(1, 3, 32, 32)).shape == (1, 16, 32, 32)


def test_encoder_is_shared_and_left_unchanged_by_stages_1b_1c_and_online(tiny):
    agent = BCVLR((3, 32, 32), SPACE, config=tiny.replace(ssl_steps=0), seed=0)
    assert agent.idm.encoder is agent.fm.encoder is agent.policy.encoder is agent.encoder
    before = {k: v.clone() for k, v in agent.encoder.state_dict().items()}
    idm_before = [p.clone() for p in agent.idm.trainable()]
    agent.pretrain(make_expert_videos("bcvlr/PixelGridReach-v0", 4, seed=0))
    agent.online(gym.make("bcvlr/PixelGridReach-v0"), 16)
    for k, v in agent.encoder.state_dict().items():
        assert torch.equal(v, before[k]), k
    # the stages did train the networks around it
    assert any(
        not torch.equal(a, b) for a, b in zip(idm_before, agent.idm.trainable(), strict=True)
    )


def test_stage_1a_does_train_the_encoder(tiny):
    agent = BCVLR((3, 32, 32), SPACE, config=tiny, seed=0)
    before = [p.clone() for p in agent.encoder.parameters()]
    agent.pretrain(make_expert_videos("bcvlr/PixelGridReach-v0", 4, seed=0))
    assert any(
        not torch.equal(a, b) for a, b in zip(before, agent.encoder.parameters(), strict=True)
    )


def test_decoder_aligns_one_hot_action_codes():
    """With latent actions that encode the true action (a fixed random embedding of the one-hot
    code plus noise), the decoder fit on 200 labelled clips reaches >= 95% held-out accuracy."""
    g = torch.Generator().manual_seed(0)
    embed = torch.randn(5, 32, generator=g)
    actions = torch.randint(0, 5, (400,), generator=g)
    la = embed[actions] + 0.3 * torch.randn(400, 32, generator=g)
    torch.manual_seed(0)
    dec = ActionDecoder(32, 5)
    dec.standardise(la[:200])
    opt = torch.optim.Adam(dec.parameters(), lr=1e-3)
    for _ in range(150):
        loss = torch.nn.functional.cross_entropy(dec(la[:200]), actions[:200])
        opt.zero_grad()
        loss.backward()
        opt.step()
    acc = (dec(la[200:]).argmax(-1) == actions[200:]).float().mean()
    assert acc >= 0.95
