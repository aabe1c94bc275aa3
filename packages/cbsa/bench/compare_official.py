"""Compare ``cbsa.CBSA`` with the official ``attn_layers.CBSA`` on the same inputs and weights.

    python packages/cbsa/bench/compare_official.py OFFICIAL_DIR

OFFICIAL_DIR holds the official ``attn_layers.py`` and ``coding_rate.py``
(``CBSA_image_classification`` of the paper's repository; they need only torch and einops). MSSA,
TSSA and the coding rate are compared too. The official layer pools ``w[:, :-1]``, the
last token dropped, although its cls token sits at index 0; moving the cls token to the end of
the sequence makes it pool exactly the patch tokens, so on that input the two layers must agree
token for token. On the usual input (cls first) the difference is the effect of the pooling slip.
"""

from __future__ import annotations

import argparse
import sys
import time

import torch

from cbsa import CBSA, MSSA, TSSA, coding_rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("official_dir", help="folder holding the official attn_layers.py")
    args = parser.parse_args()
    sys.path.insert(0, args.official_dir)
    import attn_layers  # the official module

    torch.manual_seed(0)
    torch.set_num_threads(1)
    dim, heads, dim_head, side = 64, 4, 16, 16  # the official layer needs heads * dim_head = dim
    theirs = attn_layers.CBSA(dim, heads, dim_head).double()
    ours = CBSA(dim, heads, dim_head, num_reps=64, rep_init="pool2d", has_cls=True).double()
    with torch.no_grad():
        ours.proj.weight.copy_(theirs.proj.weight)
        ours.step_rep.copy_(theirs.step_rep.view(-1))
        ours.step_x.copy_(theirs.step_x.view(-1))
        ours.to_out.weight.copy_(theirs.to_out.weight)
        ours.to_out.bias.copy_(theirs.to_out.bias)
    x = torch.randn(8, 1 + side * side, dim, dtype=torch.float64)
    cls_last = torch.roll(x, -1, dims=1)  # patches first, the cls token last
    with torch.no_grad():
        same = (torch.roll(ours(x), -1, dims=1) - theirs(cls_last)).abs().max().item()
        slip = (ours(x) - theirs(x)).abs().max().item()
        scale = ours(x).abs().max().item()
        attn = (
            (
                torch.roll(torch.roll(ours(x, return_attn=True), -1, 2), -1, 3)
                - theirs(cls_last, return_attn=True)
            )
            .abs()
            .max()
            .item()
        )
    print(f"max |ours - official| (cls moved last, same pooled patches): {same:.3g}")
    print(f"max |A^T A ours - official| (same input): {attn:.3g}")
    print(
        f"max |ours - official| (cls first, official pools the cls token and drops the last "
        f"patch): {slip:.3g} (output scale {scale:.3g})"
    )
    for name, cls in (("MSSA", MSSA), ("TSSA", TSSA)):
        torch.manual_seed(1)
        official = getattr(attn_layers, name)(dim, heads, dim_head).double()
        mine = cls(dim, heads, dim_head).double()
        with torch.no_grad():
            mine.proj.weight.copy_(official.qkv.weight)
            mine.to_out.load_state_dict(official.to_out.state_dict())
            if name == "TSSA":
                mine.temp.copy_(official.temp)
            diff = (mine(x) - official(x)).abs().max().item()
        print(f"{name}: max |ours - official| = {diff:.3g}")
    import coding_rate as official_rate

    X = torch.randn(4, heads, 64, dim_head, dtype=torch.float64)
    theirs_rate = official_rate.CodingRate(eps=0.01)(X)[0].item()
    ours_rate = coding_rate(X, eps=0.1).sum(-1).mean().item()  # their eps = our eps^2
    print(f"coding rate: ours {ours_rate:.12g}, official {theirs_rate:.12g}")
    xf = x.float()
    for name, layer in (("ours", ours.float()), ("official", theirs.float())):
        with torch.no_grad():
            layer(xf)
            t0 = time.perf_counter()
            for _ in range(20):
                layer(xf)
        print(
            f"{name}: {(time.perf_counter() - t0) / 20 * 1e3:.2f} ms per forward "
            f"(batch 8, N = {1 + side * side}, fp32, 1 thread)"
        )


if __name__ == "__main__":
    main()
