r"""Ablations of F-Adapter on the quick reproduction's task: ``python -m fadapter.ablation``.

Pretrains the same backbone as ``fadapter reproduce --quick`` (same seed, data and settings),
measures how much its Fourier branches contribute (:math:`\lVert y - x\rVert / \lVert x\rVert`
of each AFNO layer on the test inputs: the adapters inside the layer act through that branch),
then fine-tunes F-Adapter variants and the vanilla adapter: the power ``p`` of the band widths,
the official ``square_diag`` bands, a larger learning rate, three times the epochs, and the
official code's kept modes (``mode_set="corner"``: a second backbone pretrained the same way
with that mode set, then F-Adapter with radial and with the official diagonal-square bands,
the vanilla adapter and LoRA r=8 on it).
"""

from __future__ import annotations

import copy
import sys
from typing import Any

import torch

from fadapter.layers import AFNO2d, OperatorNet
from fadapter.peft import apply_peft, count_trainable
from fadapter.reproduce import IN_FRAMES, PRE_LR, ROLLOUT, RUNS, _data
from fadapter.train import evaluate, fit, windows
from paperkit import check_int, print_table

__all__ = ["VARIANTS", "ablation", "fourier_share"]

_DIAG = {"adapter_dim": 4, "band_shape": "square_diag"}
#: name → (backbone mode set, method, options, learning rate, epoch multiplier)
VARIANTS: dict[str, tuple[str, str, dict[str, Any], float, int]] = {
    "F-Adapter p=2 (default)": ("symmetric", "fadapter", {"adapter_dim": 4}, 3e-3, 1),
    "F-Adapter p=1": ("symmetric", "fadapter", {"adapter_dim": 4, "power": 1.0}, 3e-3, 1),
    "F-Adapter square_diag": ("symmetric", "fadapter", _DIAG, 3e-3, 1),
    "F-Adapter lr 1e-2": ("symmetric", "fadapter", {"adapter_dim": 4}, 1e-2, 1),
    "F-Adapter 3x epochs": ("symmetric", "fadapter", {"adapter_dim": 4}, 3e-3, 3),
    "Adapter 3x epochs": ("symmetric", "adapter", {"adapter_dim": 15}, 3e-3, 3),
    "corner: F-Adapter": ("corner", "fadapter", {"adapter_dim": 4}, 3e-3, 1),
    "corner: F-Adapter square_diag (official)": ("corner", "fadapter", _DIAG, 3e-3, 1),
    "corner: Adapter (d=15)": ("corner", "adapter", {"adapter_dim": 15}, 3e-3, 1),
    "corner: LoRA (r=8)": ("corner", "lora", {"rank": 8}, 3e-3, 1),
}


@torch.no_grad()
def fourier_share(model: OperatorNet, x: torch.Tensor) -> list[float]:
    """Per AFNO layer, :math:`\\lVert \\mathrm{AFNO}(h) - h \\rVert / \\lVert h \\rVert` on the
    normalised block input ``h`` for inputs ``x`` (the weight of the Fourier branch)."""
    shares: list[float] = []

    def hook(module: torch.nn.Module, args: tuple, out: torch.Tensor) -> None:
        shares.append(float((out - args[0]).norm() / args[0].norm()))

    handles = [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, AFNO2d)]
    model(x)
    for h in handles:
        h.remove()
    return shares


def _pretrain(data: dict[str, torch.Tensor], mode_set: str, seed: int) -> OperatorNet:
    """The quick reproduction's backbone with the given kept-mode set."""
    cfg = RUNS[True]
    torch.manual_seed(seed)
    backbone = OperatorNet(in_frames=IN_FRAMES, mode_set=mode_set)
    fit(
        backbone,
        *windows(data["pre"], IN_FRAMES),
        epochs=cfg["pre_epochs"],
        lr=PRE_LR,
        seed=seed,
        desc=f"pretraining ({mode_set} modes)",
    )
    return backbone


def ablation(seed: int = 0) -> dict[str, Any]:
    """Run the variants on the quick setting; returns the Fourier shares, the pretrained
    backbones' errors without fine-tuning, and one row per variant."""
    seed = check_int("seed", "ablation", seed, low=0)
    cfg = RUNS[True]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        data = _data(cfg, seed)
        backbones = {m: _pretrain(data, m, seed) for m in ("symmetric", "corner")}
        x_test, _ = windows(data["test"], IN_FRAMES)
        shares = fourier_share(backbones["symmetric"], x_test[:64])
        zero_shot = {
            m: evaluate(b, data["test"], IN_FRAMES, ROLLOUT)["l2re_1step"]
            for m, b in backbones.items()
        }
        x_ft, y_ft = windows(data["ft"], IN_FRAMES)
        rows = []
        for name, (mode_set, method, kw, lr, mult) in VARIANTS.items():
            torch.manual_seed(seed + 1)
            model = apply_peft(copy.deepcopy(backbones[mode_set]), method, **kw)
            run = fit(
                model, x_ft, y_ft, epochs=cfg["ft_epochs"] * mult, lr=lr, seed=seed, desc=name
            )
            res = evaluate(model, data["test"], IN_FRAMES, ROLLOUT)
            rows.append(
                {
                    "variant": name,
                    "trainable": count_trainable(model),
                    "lr": lr,
                    "epochs": cfg["ft_epochs"] * mult,
                    "L2RE 1-step": res["l2re_1step"],
                    "L2RE 10-step": res["l2re_rollout"],
                    "E_low": res["band_errors"][0],
                    "train s": run["seconds"],
                }
            )
    finally:
        torch.set_num_threads(threads)
    return {"fourier_share": shares, "zero_shot": zero_shot, "rows": rows}


if __name__ == "__main__":  # pragma: no cover - the README's command
    result = ablation(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    print("Fourier-branch share per AFNO layer:", [round(s, 4) for s in result["fourier_share"]])
    print("1-step L2RE without fine-tuning:", result["zero_shot"])
    print_table(result["rows"], title="F-Adapter ablations (quick setting, nu=1e-4 test set)")
