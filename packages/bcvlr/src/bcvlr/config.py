"""Hyper-parameters of BCV-LR: the paper's defaults (:meth:`BCVLRConfig.paper`) and the small
CPU preset (:meth:`BCVLRConfig.small`) that the reproduction uses."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

__all__ = ["BCVLRConfig"]


@dataclass(frozen=True)
class BCVLRConfig:
    """Every setting of the four stages (Sec. 3 of the paper; appendix hyper-parameter tables).

    Networks: encoder stem stride and channels, IMPALA channels x scale of the IDM and the policy,
    UNet levels and base width of the forward model, the VQ-EMA quantiser
    (``d_la = num_codebooks * num_latents * emb_dim``). Stages: steps, batch and learning rate of
    1a (self-supervised encoder), 1b (latent action model), 1c (latent policy); stage 2 (online):
    updates per iteration, environments x steps per collection, learning rates, the weight of the
    forward-model term, buffer size and the number of random seed steps.
    """

    enc_channels: int = 16
    enc_stride: int = 1
    impala_channels: tuple[int, ...] = (16, 32, 32)
    impala_scale: int = 4
    features: int = 256
    unet_levels: int = 5
    unet_base: int = 16
    num_codebooks: int = 2
    num_latents: int = 4
    emb_dim: int = 16
    num_embs: int = 64
    commitment: float = 0.05
    decay: float = 0.999
    proj_dim: int = 256
    pred_hidden: int = 512
    ssl_steps: int = 20_000
    ssl_batch: int = 512
    ssl_lr: float = 3e-5
    ssl_tau: float = 0.05
    ssl_target_every: int = 2
    recon_weight: float = 0.1
    lam_steps: int = 10_000
    lam_batch: int = 128
    lam_lr: float = 3e-4
    grad_clip: float = 2.0
    policy_steps: int = 20_000
    policy_batch: int = 128
    policy_lr: float = 2e-4
    decoder_hidden: tuple[int, ...] = (192, 128, 64)
    idm_updates: int = 60
    decoder_updates: int = 0
    policy_updates: int = 500
    online_batch: int = 512
    idm_lr: float = 2e-5
    decoder_lr: float = 1e-3
    wm_loss_alpha: float = 15.0
    num_envs: int = 64
    num_steps: int = 64
    seed_steps: int = 64
    buffer_size: int = 20_000

    def __post_init__(self) -> None:
        from paperkit import check_int, check_real, describe, param_error

        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.type in ("int", int):
                low = (
                    0
                    if f.name
                    in (
                        "ssl_steps",
                        "lam_steps",
                        "policy_steps",
                        "idm_updates",
                        "decoder_updates",
                        "policy_updates",
                        "seed_steps",
                    )
                    else 1
                )
                check_int(f.name, "BCVLRConfig", v, low=low, high=10_000_000)
            elif f.type in ("float", float):
                high = 1.0 if f.name in ("decay", "ssl_tau") else 1e6
                check_real(f.name, "BCVLRConfig", v, low=0, high=high)
            else:
                ok = (
                    isinstance(v, tuple)
                    and len(v) > 0
                    and all(
                        isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= 4096 for x in v
                    )
                )
                if not ok:
                    raise param_error(
                        f.name, "BCVLRConfig", "a non-empty tuple of ints in [1, 4096]", describe(v)
                    )
        if self.enc_stride not in (1, 2):
            raise param_error("enc_stride", "BCVLRConfig", "1 or 2", str(self.enc_stride))

    @property
    def d_la(self) -> int:
        """Latent action width ``num_codebooks * num_latents * emb_dim``."""
        return self.num_codebooks * self.num_latents * self.emb_dim

    @classmethod
    def paper(cls) -> BCVLRConfig:
        """The paper's Procgen defaults (64x64 frames; about 100k interactions online)."""
        return cls()

    @classmethod
    def small(cls) -> BCVLRConfig:
        """The 2-core CPU preset: stride-2 stem with 8 channels (features 8x16x16 on 32x32
        frames), IDM/policy IMPALA (8, 16, 16), a 2-level UNet with 16 base channels,
        stage-1b learning rate 1e-3 (3e-4 collapses the codebook within 300 steps),
        ``d_la = 2*2*8 = 32`` with 16 codes, batch 64 and 300 steps in each offline stage,
        online iterations of 20 IDM + 100 policy updates and 8 envs x 32 steps.
        ``decoder_updates`` (extra decoder-only steps per online iteration) is 0: the paper has
        no decoder-only step."""
        return cls(
            enc_channels=8,
            enc_stride=2,
            impala_channels=(8, 16, 16),
            impala_scale=1,
            unet_levels=2,
            num_latents=2,
            emb_dim=8,
            num_embs=16,
            ssl_steps=300,
            ssl_batch=64,
            lam_steps=300,
            lam_batch=64,
            lam_lr=1e-3,
            policy_steps=300,
            policy_batch=64,
            idm_updates=20,
            policy_updates=100,
            online_batch=64,
            num_envs=8,
            num_steps=32,
        )

    def replace(self, **changes) -> BCVLRConfig:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)
