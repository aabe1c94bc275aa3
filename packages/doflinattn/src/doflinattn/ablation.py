"""``python -m doflinattn.ablation [VARIANT ...]``: the MiniLM comparison (b) under the
alternatives the method leaves open, one seed each at the quick run's size: the loss
(``mse+ce``), the feature map (``mlp``), the oversampling constant c, more distillation steps,
and more DoF points. Prints one markdown row per variant (summed held-out layer error and
embedding cosine, uniform vs DoF dims at the same budget). ``python -m doflinattn.ablation
gram`` prints, per MiniLM layer, what the DoF estimate is made of: the mean off-diagonal Gram
entry, the top eigenvalue, and the share of d_l(lambda*) that comes from eigenvalues below 2/n
(the floor a near-diagonal Gram of n points has). ``python -m doflinattn.ablation profile``
prints the MiniLM DoF profile d_l(lambda*) at the quick run's budget when the points are scaled
by ``f * d^(-1/4)`` for f = 1, 1/2, 1/4 (a wider Gaussian bandwidth, 1/f), to show how the
profile depends on the kernel normalisation the method leaves open."""

from __future__ import annotations

import sys

import numpy as np
import torch

from doflinattn.data import stdlib_sentences
from doflinattn.dof import allocate_dims, kernel_gram
from doflinattn.experiments import cache_spectra, minilm_experiment
from doflinattn.teachers import MiniLMTeacher
from paperkit import markdown_table

VARIANTS = {
    "base": {},  # mse, hedgehog, c = 1, 100 steps, <= 512 DoF points
    "mse+ce": {"loss": "mse+ce"},
    "mlp": {"feature_map": "mlp"},
    "c2": {"oversample": 2.0},
    "steps300": {"steps": 300},
    "points1024": {"max_points": 1024},
}


def run(names: list[str], sentences: int = 150, budget_per_layer: int = 16) -> list[dict]:
    """One row per named variant of :data:`VARIANTS` (seed 0)."""
    teacher = MiniLMTeacher()
    rows = []
    for name in names:
        change = VARIANTS[name]
        kwargs = dict(
            sentences=sentences,
            budget_per_layer=budget_per_layer,
            steps=100,
            seeds=[0],
            max_points=512,
            teacher=teacher,
        )
        kwargs.update(change)
        res = minilm_experiment(**kwargs)
        uni, dof = res["runs"]["uniform"][0], res["runs"]["dof"][0]
        d_err = np.array(uni["sentence_error"]) - np.array(dof["sentence_error"])
        rows.append(
            {
                "variant": name,
                "dims_dof": " ".join(map(str, res["dims"]["dof"])),
                "err_uniform": sum(uni["layer_error"]),
                "err_dof": sum(dof["layer_error"]),
                "err_gain": f"{d_err.mean():+.4f} ± {d_err.std(ddof=1) / np.sqrt(len(d_err)):.4f}",
                "cos_uniform": float(np.mean(uni["cosine"])),
                "cos_dof": float(np.mean(dof["cosine"])),
            }
        )
        print(markdown_table(rows[-1:]), flush=True)
    return rows


def gram_stats(sentences: int = 150, budget: int = 96, max_points: int = 512) -> list[dict]:
    """Per layer: mean off-diagonal Gram entry (head 0), mean top eigenvalue of K/n over heads,
    d_l(lambda*) at the quick run's budget, and the share of it from eigenvalues < 2/n."""
    teacher = MiniLMTeacher()
    caches = teacher.collect(stdlib_sentences(sentences, seed=0))
    spectra = cache_spectra(caches, max_points, seed=0)
    _, lam = allocate_dims(spectra, budget)
    rows = []
    for l, (c, s) in enumerate(zip(caches, spectra, strict=True)):
        keep = ~c.mask
        x = torch.cat([c.q.transpose(1, 2)[keep][:, 0], c.k.transpose(1, 2)[keep][:, 0]])
        x = x.double()[torch.randperm(len(x), generator=torch.Generator().manual_seed(0))]
        k = kernel_gram(x[:max_points] * c.head_dim**-0.25)
        n = k.shape[0]
        share = s / (s + lam)
        rows.append(
            {
                "layer": l,
                "offdiag_mean": float((k.sum() - k.trace()) / (n * (n - 1))),
                "mu_1": float(s[:, 0].mean()),
                "dof": float(share.sum(-1).mean()),
                "share_below_2/n": float(
                    (share * (s < 2 / n)).sum(-1).mean() / share.sum(-1).mean()
                ),
            }
        )
    return rows


def bandwidth_profiles(
    sentences: int = 150, budget: int = 96, max_points: int = 512, factors=(1.0, 0.5, 0.25)
) -> list[dict]:
    """Per factor f: the per-layer d_l(lambda*) and DoF dims at ``budget`` with the points
    scaled by f * d^(-1/4), and max/min of the profile."""
    teacher = MiniLMTeacher()
    caches = teacher.collect(stdlib_sentences(sentences, seed=0))
    rows = []
    for f in factors:
        spectra = cache_spectra(caches, max_points, seed=0, scale=f * caches[0].head_dim ** -0.25)
        dims, lam = allocate_dims(spectra, budget)
        dof = [float((s / (s + lam)).sum(-1).mean()) for s in spectra]
        rows.append(
            {
                "scale factor": f,
                "lambda*": lam,
                "d_l(lambda*)": " ".join(f"{x:.1f}" for x in dof),
                "dims": " ".join(map(str, dims)),
                "max/min": max(dof) / min(dof),
            }
        )
    return rows


if __name__ == "__main__":
    torch.set_num_threads(1)
    if sys.argv[1:2] == ["gram"]:
        print(markdown_table(gram_stats()))
    elif sys.argv[1:2] == ["profile"]:
        print(markdown_table(bandwidth_profiles()))
    else:
        print(markdown_table(run(sys.argv[1:] or list(VARIANTS))))
