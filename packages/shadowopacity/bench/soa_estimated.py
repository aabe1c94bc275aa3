"""SOA without the shadow-free image (I_f estimated through rho_hat) against SOA with it, on 64
scenes at 32x32 (seed 5), on textured backgrounds and on flat ones (each scene's mean colour).

    OMP_NUM_THREADS=1 uv run python packages/shadowopacity/bench/soa_estimated.py
"""

import torch

from shadowopacity import ShadowOpacityAugment, estimate_rho, make_shadow_scenes, render_shadow

d = make_shadow_scenes(64, 32, seed=5)
flat = d["shadow_free"].mean(dim=(2, 3), keepdim=True).expand_as(d["shadow_free"]).contiguous()
soa = ShadowOpacityAugment(p=1.0)
for name, free in (("flat", flat), ("textured", d["shadow_free"])):
    image = render_shadow(free, d["alpha"], d["rho"])
    true = soa(image, d["alpha"], free, d["rho"], generator=torch.Generator().manual_seed(0))
    est = soa(image, d["alpha"], generator=torch.Generator().manual_seed(0))
    changed = est[2] != 1
    rho, valid = estimate_rho(image, d["alpha"])
    print(
        f"{name}: re-rendered {int(changed.sum())}/64, MAE(I' estimated, I' true) "
        f"{float((est[0] - true[0])[changed].abs().mean()):.2e}, "
        f"mean |rho_hat - rho| {float((rho - d['rho'])[valid].abs().mean()):.4f}"
    )
