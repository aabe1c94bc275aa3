"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range values listed in ``bad``)."""

import torch

import gradspo
import gradspo.toy
from paperkit.testing import BadInputs, Call, fresh

B, D = 3, 2


def _rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _scheduler():
    s = gradspo.DDIMScheduler(set_alpha_to_one=False)
    s.set_timesteps(20)
    return s


def _model():
    torch.manual_seed(0)
    return gradspo.toy.MLPDenoiser(hidden=8)


def _prepare(s):
    s.set_timesteps(20)


PAIR = {"eps_theta": "B D", "eps_ref": "B D", "eps_ema": "B D", "g": "B D", "alpha_bar_t": "B"}
LOSS_BAD = {"beta": [0.0, -1.0], "clip": [0.0, 1.0, 1.5], "gamma": [-0.1]}
GRAD = dict(
    eps_theta=_rand(B, D, seed=1),
    eps_ref=_rand(B, D, seed=2),
    eps_ema=_rand(B, D, seed=3),
    g=_rand(B, D, seed=4),
    alpha_bar_t=torch.tensor([0.2, 0.5, 0.9]),
    beta=10.0,
    clip=0.1,
    gamma=0.5,
    shapes=PAIR,
    bad={**LOSS_BAD, "alpha_bar_t": [torch.tensor([0.0, 0.5, 1.5])]},
)
SPO = dict(
    mu_theta=_rand(B, D, seed=1),
    mu_ref=_rand(B, D, seed=2),
    x_win=_rand(B, D, seed=3),
    x_lose=_rand(B, D, seed=4),
    sigma=torch.tensor([0.3, 0.2, 0.1]),
    beta=10.0,
    clip=0.1,
    shapes={"mu_theta": "B D", "mu_ref": "B D", "x_win": "B D", "x_lose": "B D", "sigma": "B"},
    bad={"beta": [0.0], "clip": [0.0, 1.0], "sigma": [torch.tensor([0.3, 0.0, 0.1])]},
)
COLLECT = dict(
    model_ema=fresh(_model),
    scheduler=fresh(_scheduler),
    cond=torch.tensor([0, 1, 3]),
    reward_fn=gradspo.toy.directional(),
    K=2,
    steps=4,
    start_step=1,
    cfg_scale=2.0,
    gap_threshold=0.0,
    eta=1.0,
    dim=2,
    bad={
        "K": [1, 0],
        "start_step": [4, -1],
        "steps": [0, 10**6],
        "gap_threshold": [-1.0],
        "cfg_scale": [-1.0],
        "eta": [-0.5],
        "dim": [0],
        "cond": [torch.tensor([0, -1, 2])],
    },
)

SUITE = BadInputs(
    gradspo,
    [
        Call(gradspo.gradspo_loss, **GRAD),
        Call(gradspo.gradspo_logit, **GRAD),
        Call(gradspo.spo_loss, **SPO),
        Call(gradspo.spo_logit, **SPO),
        Call(
            gradspo.diffusion_dpo_loss,
            eps_theta_w=_rand(B, D, seed=1),
            eps_theta_l=_rand(B, D, seed=2),
            eps_ref_w=_rand(B, D, seed=3),
            eps_ref_l=_rand(B, D, seed=4),
            noise_w=_rand(B, D, seed=5),
            noise_l=_rand(B, D, seed=6),
            beta=100.0,
            shapes=dict.fromkeys(
                ("eps_theta_w", "eps_theta_l", "eps_ref_w", "eps_ref_l", "noise_w", "noise_l"),
                "B D",
            ),
            bad={"beta": [0.0, -5.0]},
        ),
        Call(
            gradspo.implied_step_weights,
            scheduler=fresh(_scheduler),
            gamma=0.5,
            D=4,
            beta=10.0,
            eta=1.0,
            bad={
                "gamma": [-1.0],
                "D": [0],
                "beta": [0.0],
                "eta": [0.0],
                "scheduler": [gradspo.DDIMScheduler(), "sched"],
            },
        ),
        Call(
            gradspo.DDIMScheduler,
            num_train_steps=1000,
            beta_schedule="scaled_linear",
            beta_start=0.00085,
            beta_end=0.012,
            set_alpha_to_one=False,
            prepare=_prepare,
            method="step",
            call={
                "eps": _rand(B, D, seed=1),
                "t": 500,
                "x_t": _rand(B, D, seed=2),
                "eta": 1.0,
                "noise": _rand(B, D, seed=3),
            },
            shapes={"x_t": "B D", "eps": "B D", "noise": "B D"},
            bad={
                "num_train_steps": [1],
                "beta_start": [0.0, 2.0],
                "beta_end": [0.0001],
                "t": [-1, 1000],
                "eta": [-1.0],
            },
        ),
        Call(
            gradspo.DDIMScheduler,
            name="DDIMScheduler.log_prob",
            method="log_prob",
            call={
                "x_prev": _rand(B, D, seed=1),
                "mu": _rand(B, D, seed=2),
                "sigma": torch.tensor([0.5, 0.4, 0.3]),
            },
            shapes={"x_prev": "B D", "mu": "B D", "sigma": "B"},
            bad={"sigma": [torch.tensor([0.5, -0.4, 0.3])]},
        ),
        Call(
            gradspo.DDIMScheduler,
            name="DDIMScheduler.set_timesteps",
            method="set_timesteps",
            call={"steps": 20},
            bad={"steps": [0, 1001]},
        ),
        Call(gradspo.collect_stepwise_pairs, **COLLECT),
        Call(
            gradspo.sample,
            model=fresh(_model),
            scheduler=fresh(_scheduler),
            cond=torch.tensor([0, 1, 2]),
            steps=3,
            cfg_scale=2.0,
            eta=1.0,
            dim=2,
            bad={
                "steps": [0],
                "cfg_scale": [-1.0],
                "eta": [-1.0],
                "dim": [0],
                "cond": [torch.tensor([0, -1, 2])],
                "model": [3.0],
            },
        ),
        Call(
            gradspo.cfg_eps,
            model=fresh(_model),
            x=_rand(B, D),
            t=torch.tensor([5, 6, 7]),
            cond=torch.tensor([0, 1, 2]),
            cfg_scale=2.0,
            shapes={"x": "B D", "t": "B", "cond": "B"},
            bad={"cfg_scale": [-1.0], "model": [3.0]},
        ),
        Call(
            gradspo.GradSPOTrainer,
            {
                "model": fresh(_model),
                "ref": None,
                "reward_fn": gradspo.toy.directional(),
                "scheduler": fresh(_scheduler),
                "lr": 1e-3,
                "ema_decay": 0.9,
                "lora_rank": 4,
                "K": 2,
                "method": "gradspo",
                "beta": 10.0,
                "clip": 0.1,
                "gamma": 0.5,
                "steps": 3,
                "start_step": 1,
                "cfg_scale": 2.0,
                "gap_threshold": 0.0,
                "use_ema": True,
                "batch_size": 4,
                "train_batch_size": 8,
                "max_grad_norm": 1.0,
                "weight_decay": 1e-4,
                "seed": 0,
            },
            method="train",
            call={"conds": torch.tensor([0, 1, 2, 3]), "epochs": 1},
            bad={
                "lr": [0.0, -1.0],
                "ema_decay": [1.0, -0.1],
                "lora_rank": [0, 100],
                "K": [1],
                "beta": [0.0],
                "clip": [0.0, 1.0],
                "gamma": [-1.0],
                "steps": [0],
                "start_step": [3],
                "max_grad_norm": [0.0],
                "batch_size": [0],
                "epochs": [0],
                "model": [3.0],
                "ref": ["ref"],
                "scheduler": ["sched"],
            },
        ),
        Call(
            gradspo.ema_update,
            ema=fresh(_model),
            model=fresh(_model),
            decay=0.9,
            bad={"decay": [-0.1, 1.5], "ema": [3.0], "model": ["m"]},
        ),
        Call(
            gradspo.add_lora,
            model=fresh(_model),
            rank=2,
            alpha=2.0,
            bad={"rank": [0, 100], "alpha": [0.0], "model": [3.0]},
        ),
        Call(
            gradspo.LoRALinear,
            base=fresh(lambda: torch.nn.Linear(4, 3)),
            rank=2,
            alpha=2.0,
            call={"x": _rand(5, 4)},
            accepts={"x": {"nan", "inf", "empty", "rank"}},
            bad={"rank": [0, 4], "alpha": [0.0], "base": [3.0]},
        ),
        Call(
            gradspo.mean_reward,
            reward_fn=gradspo.toy.directional(),
            x=_rand(4, 2),
            cond=torch.tensor([0, 1, 2, 3]),
            shapes={"x": "N D", "cond": "N"},
            bad={"reward_fn": [3.0]},
        ),
        Call(
            gradspo.mmd_rbf,
            a=_rand(20, 2, seed=1),
            b=_rand(30, 2, seed=2),
            bandwidths=(0.1, 0.3),
            shapes={"a": "N D", "b": "M D"},
            bad={"bandwidths": [(0.0,), (-1.0, 0.3)]},
        ),
        Call(
            gradspo.mode_coverage,
            x=_rand(20, 2),
            centers=_rand(8, 2, seed=3),
            radius=0.5,
            min_frac=0.01,
            shapes={"x": "N D", "centers": "M D"},
            bad={"radius": [0.0], "min_frac": [-0.1, 1.5]},
        ),
    ],
    exempt={
        "PairBatch": "a plain dataclass of collect_stepwise_pairs' outputs (no checks of its own)",
    },
)
test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()

TOY = BadInputs(
    gradspo.toy,
    [
        Call(
            gradspo.toy.EightGaussians,
            radius=2.0,
            std=0.1,
            method="sample",
            call={"n": 10, "cond": torch.tensor([0, 1, 2, 3] * 2 + [0, 1])},
            shapes={"cond": "10"},
            bad={
                "radius": [0.0],
                "std": [-0.1],
                "n": [0, 10**9],
                "cond": [torch.tensor([0, 1, 2, 4] * 2 + [0, 1])],
            },
        ),
        Call(
            gradspo.toy.MLPDenoiser,
            dim=2,
            hidden=8,
            n_cond=4,
            layers=2,
            call={
                "x": _rand(3, 2),
                "t": torch.tensor([1, 500, 999]),
                "cond": torch.tensor([0, 3, -1]),
            },
            shapes={"x": "B 2", "t": "B", "cond": "B"},
            accepts={"cond": {"negative"}},  # −1 is the null label (documented)
            bad={
                "dim": [0],
                "hidden": [1],
                "n_cond": [0],
                "layers": [0],
                "cond": [torch.tensor([0, 4, -1]), torch.tensor([0, -2, 1])],
            },
        ),
        Call(
            gradspo.toy.DirectionalReward,
            n_cond=4,
            weight=0.5,
            call={"x": _rand(3, 2), "t": 0, "cond": torch.tensor([0, 1, 3])},
            shapes={"x": "N 2", "cond": "N"},
            accepts={"t": {"fraction", "type"}},
            bad={"n_cond": [0], "weight": [-1.0], "cond": [torch.tensor([0, 4, 1])]},
        ),
        Call(gradspo.toy.directional, n_cond=4, weight=0.5, bad={"n_cond": [0], "weight": [-1.0]}),
        Call(
            gradspo.toy.train_ddpm,
            model=fresh(_model),
            data=gradspo.toy.EightGaussians(),
            scheduler=fresh(_scheduler),
            steps=2,
            batch_size=8,
            lr=1e-3,
            p_uncond=0.1,
            bad={
                "steps": [0],
                "batch_size": [0],
                "lr": [0.0],
                "p_uncond": [-0.1, 1.5],
                "model": [3.0],
                "data": ["data"],
                "scheduler": ["s"],
            },
        ),
    ],
)
test_toy_bad_input = TOY.test()
test_toy_every_public_name_is_covered = TOY.coverage_test()
