"""Compare vud's information measures and selection rules with the official code on the same inputs.

The official repository (jacobyhsi/VUD) drives an LLM through vLLM, which cannot run here; its
``src/utils.py`` helpers (entropy, KL, the threshold and rank rules, the Gaussian fits) are plain
numpy/pandas, so we feed them the candidate tables vud computes and compare. Usage::

    uv run python packages/vud/scripts/compare_official.py /path/to/VUD-checkout [pfn_weights.pt]

``src.chat`` (the LLM client) is replaced by a stub; nothing of the official code is copied here.
"""

import math
import sys
import types

import numpy as np
import pandas as pd
import torch

from vud import BayesOracleICL, LogisticPrior, TransformerICL, decompose, select_probe
from vud.info import gaussian_kl_

sys.path.insert(0, sys.argv[1])
sys.modules["src.chat"] = types.SimpleNamespace(chat_perturb=None)
from src.utils import (  # noqa: E402  (the official helpers)
    ToyRegressionUtils,
    calculate_entropy,
    calculate_kl_divergence,
    calculate_min_Va_by_KL_rank,
    calculate_min_Va_by_KL_threshold,
)

torch.set_num_threads(1)
prior = LogisticPrior()
model = TransformerICL(1)
if len(sys.argv) > 2:
    model.load_state_dict(torch.load(sys.argv[2], weights_only=True))
models = {"oracle": BayesOracleICL(prior), "PFN": model.eval()}
g = torch.Generator().manual_seed(0)
cx, cy, qx, _ = prior.sample_tasks(40, 10, 1, g)
d_ent = d_kl = 0.0
same_thr = same_rank = total = 0
for name, pred in models.items():
    dtype = torch.float64 if name == "oracle" else torch.float32
    for i in range(40):
        r = decompose(
            pred, cx[i].to(dtype), cy[i].to(dtype), qx[i, 0].to(dtype), num_permutations=1, seed=i
        )
        p0 = pred.predict(
            cx[i : i + 1].to(dtype), cy[i : i + 1].to(dtype), qx[i : i + 1].to(dtype)
        )[0, 0].double()
        ours_bits = r.total / math.log(2)
        theirs = calculate_entropy({"0": float(p0[0]), "1": float(p0[1])})
        d_ent = max(d_ent, abs(ours_bits - theirs))
        # KL(p0 || q) for q = a perturbed distribution, as the official filter computes it
        q = torch.tensor([0.3, 0.7], dtype=torch.float64)
        ours_kl = float((p0 * (p0 / q).log()).sum())
        theirs_kl = calculate_kl_divergence(
            {"0": float(p0[0]), "1": float(p0[1])}, {"0": 0.3, "1": 0.7}
        )
        d_kl = max(d_kl, abs(ours_kl - theirs_kl))
        table = pd.DataFrame(
            {"Va": r.candidates["va"], "kl_pyx_pyxz": r.candidates["kl"], "H[p(y|x,D)]": r.total}
        )
        for rule, official, kwargs in (
            ("thr", calculate_min_Va_by_KL_threshold, {"threshold": 0.01}),
            ("rank", calculate_min_Va_by_KL_rank, {"num_valid_Va": 5}),
        ):
            out = official(table.copy(), **kwargs)
            best, _ = select_probe(
                r.candidates["va"],
                r.candidates["kl"],
                kl_threshold=0.01 if rule == "thr" else None,
                kl_rank=5,
            )
            ours = math.nan if best is None else r.candidates["va"][best]
            theirs_va = float(out["min_Va"].iloc[0])
            agree = (math.isnan(ours) and math.isnan(theirs_va)) or ours == theirs_va
            if rule == "thr":
                same_thr += agree
            else:
                same_rank += agree
        total += 1
# regression: Gaussian fit (Bessel) and Gaussian KL on the same samples
rng = np.random.default_rng(0)
d_gauss = 0.0
for _ in range(100):
    a, b = rng.normal(0, 1, 10), rng.normal(0.3, 1.5, 10)
    ga, gb = (
        ToyRegressionUtils.gaussian_from_samples(list(a)),
        ToyRegressionUtils.gaussian_from_samples(list(b)),
    )
    theirs = ToyRegressionUtils.calculate_kl_divergence(ga, gb)
    t = [
        torch.tensor(v, dtype=torch.float64)
        for v in (a.mean(), a.var(ddof=1), b.mean(), b.var(ddof=1))
    ]
    d_gauss = max(d_gauss, abs(float(gaussian_kl_(*t)) - theirs))
print(f"decompositions compared: {total} (40 oracle, 40 PFN)")
print(f"entropy (bits) max |ours - official|: {d_ent:.2e} (official rounds to 5 decimals)")
print(f"KL max |ours - official|: {d_kl:.2e} (official adds eps=1e-12)")
print(f"threshold rule (delta=0.01) same min V_a: {same_thr}/{total}")
print(f"rank rule (k=5) same min V_a: {same_rank}/{total}")
print(f"Gaussian KL of Bessel fits, max |ours - official|: {d_gauss:.2e}")
