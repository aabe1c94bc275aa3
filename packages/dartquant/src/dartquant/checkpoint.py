"""Checkpoints on disk: quantise a local Hugging Face model, save it, load it back.

``dartquant quantize --model PATH --out DIR --calib FILE`` loads a local Llama-family checkpoint
(nothing is downloaded), calibrates the rotations on windows of a tokenised text file, fuses
and quantises, and saves the rotated model with ``save_pretrained``: its weights are the
rotated, quantised values (RTN or GPTQ grid points), and ``dartquant.json`` records what the
weights cannot carry (the online Hadamards, the activation and KV bit-widths).
:func:`load_quantized` rebuilds that model from the folder.

A tokenised text file holds token ids: ``.npy`` (a 1-D integer array), ``.pt`` (a 1-D integer
tensor) or plain text with whitespace-separated integers.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from dartquant.model import check_model, runtime_state, set_kv_bits, set_online_hadamard
from dartquant.quant import QuantLinear, bit_width
from dartquant.recipe import METHODS, QuantResult, pipeline
from paperkit import Described, check_choice, check_int, param_error

__all__ = ["load_quantized", "quantize_checkpoint", "read_token_file", "save_quantized"]

META = "dartquant.json"


def _path(name: str, owner: str, path: Any) -> Path:
    if not isinstance(path, (str, Path)):
        raise param_error(
            name, owner, "a path", Described(f"a {type(path).__name__}"), cls=TypeError
        )
    return Path(path)


def _existing(name: str, owner: str, path: Any, *, folder: bool) -> Path:
    p = _path(name, owner, path)
    kind = "folder" if folder else "file"
    if not (p.is_dir() if folder else p.is_file()):
        raise param_error(name, owner, f"an existing {kind}", Described(f"{str(p)!r}, not found"))
    return p


def read_token_file(path: str | Path) -> torch.Tensor:
    """The token ids of a tokenised text file as a 1-D int64 tensor (``.npy``, ``.pt`` or
    whitespace-separated integers); a missing file, an empty one or non-integer ids are
    refused with a ``ValueError`` naming ``path``."""
    return _read_tokens("path", "read_token_file", path)


def _read_tokens(name: str, owner: str, path: Any) -> torch.Tensor:
    p = _existing(name, owner, path, folder=False)
    try:
        if p.suffix == ".npy":
            ids = torch.from_numpy(np.load(p, allow_pickle=False))
        elif p.suffix == ".pt":
            ids = torch.load(p, weights_only=True)
        else:
            ids = torch.tensor([int(t) for t in p.read_text().split()], dtype=torch.int64)
    except (ValueError, OSError) as exc:
        raise param_error(name, owner, "a file of integer token ids", Described(str(exc))) from exc
    if not isinstance(ids, torch.Tensor) or ids.dim() != 1 or ids.numel() == 0:
        raise param_error(name, owner, "a non-empty 1-D list of token ids", Described(str(p)))
    if ids.dtype.is_floating_point or ids.dtype == torch.bool:
        raise param_error(name, owner, "integer token ids", Described(f"{ids.dtype} values"))
    return ids.long()


def _bake(model: nn.Module) -> None:
    """Store every QuantLinear's RTN weight on its grid, so the saved weights are the
    quantised ones."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, QuantLinear) and not m.weight_prequantized and m.w_bits is not None:
                m.weight.copy_(m.quantized_weight())
                m.weight_prequantized = True


def save_quantized(result: QuantResult, out: str | Path, **meta: Any) -> Path:
    """Save ``result.model`` with ``save_pretrained`` into ``out`` (created), plus
    ``dartquant.json``; returns the folder. ``meta`` entries are recorded as given."""
    owner = "save_quantized"
    if not isinstance(result, QuantResult):
        got = Described(f"a {type(result).__name__}")
        raise param_error("result", owner, "a QuantResult (from pipeline)", got, cls=TypeError)
    out = _path("out", owner, out)
    model = result.model
    check_model(model, owner)
    _bake(model)
    q = next(m for m in model.modules() if isinstance(m, QuantLinear))
    record = {
        "method": result.method,
        "w_bits": q.w_bits,
        "a_bits": q.a_bits,
        "a_clip": q.a_clip,
        **runtime_state(model),
        **meta,
    }
    model.save_pretrained(out)
    (out / META).write_text(json.dumps(record, indent=2))
    return out


def load_quantized(path: str | Path) -> nn.Module:
    """The quantised model saved by :func:`save_quantized` (or ``dartquant quantize``) in
    ``path``: the transformers model with its projections wrapped as :class:`QuantLinear` and
    the online Hadamards and KV bit-width switched back on."""
    from transformers import AutoModelForCausalLM

    owner = "load_quantized"
    p = _existing("path", owner, path, folder=True)
    if not (p / META).is_file():
        raise param_error(
            "path", owner, f"a folder saved by dartquant (with {META})", Described(str(p))
        )
    record = json.loads((p / META).read_text())
    model = AutoModelForCausalLM.from_pretrained(p, local_files_only=True).eval()
    for layer in model.model.layers:
        for parent in (layer.self_attn, layer.mlp):
            for child, linear in list(parent.named_children()):
                if isinstance(linear, nn.Linear):
                    q = QuantLinear.from_linear(
                        linear,
                        w_bits=record["w_bits"],
                        a_bits=record["a_bits"],
                        a_clip=record["a_clip"],
                    )
                    q.weight_prequantized = True
                    setattr(parent, child, q)
    if record["online_hadamard"]:
        set_online_hadamard(model, True)
    set_kv_bits(model, record["kv_bits"], record["kv_clip"])
    return model


def quantize_checkpoint(
    model_path: str | Path,
    out: str | Path,
    calib: str | Path,
    *,
    method: str = "dartquant",
    w_bits: int | None = 4,
    a_bits: int | None = 4,
    kv_bits: int | None = 4,
    weight_quant: str = "rtn",
    n_calib: int = 32,
    seq_len: int = 64,
    seed: int = 0,
) -> QuantResult:
    """Quantise the local checkpoint in ``model_path`` with ``method`` on ``n_calib`` windows of
    ``seq_len`` tokens from the tokenised file ``calib`` (evenly spaced), save it in ``out``
    and return the :class:`QuantResult`. A missing checkpoint folder or calibration file is
    refused before anything is loaded; the other arguments are checked by :func:`pipeline`."""
    from transformers import AutoModelForCausalLM

    owner = "quantize_checkpoint"
    check_choice("method", owner, method, METHODS)
    w_bits = bit_width("w_bits", owner, w_bits, allow_none=True)
    a_bits = bit_width("a_bits", owner, a_bits, allow_none=True)
    kv_bits = bit_width("kv_bits", owner, kv_bits, allow_none=True)
    check_choice("weight_quant", owner, weight_quant, ("rtn", "gptq"))
    n_calib = check_int("n_calib", owner, n_calib, low=1)
    seq_len = check_int("seq_len", owner, seq_len, low=2)
    seed = check_int("seed", owner, seed, low=0)
    out = _path("out", owner, out)
    folder = _existing("model_path", owner, model_path, folder=True)
    if not (folder / "config.json").is_file():
        raise param_error(
            "model_path",
            owner,
            "a transformers checkpoint folder (with config.json)",
            Described(str(folder)),
        )
    ids = _read_tokens("calib", owner, calib)
    if len(ids) < seq_len:
        expected = f"at most the {len(ids)} tokens of the 'calib' file"
        raise param_error("seq_len", owner, expected, seq_len)
    model = check_model(AutoModelForCausalLM.from_pretrained(folder, local_files_only=True), owner)
    model = model.float().eval()
    starts = torch.linspace(0, len(ids) - seq_len, n_calib).long()
    windows = torch.stack([ids[s : s + seq_len] for s in starts.tolist()])
    result = pipeline(
        model,
        windows,
        method,
        w_bits=w_bits,
        a_bits=a_bits,
        kv_bits=kv_bits,
        weight_quant=weight_quant,
        seed=seed,
    )
    save_quantized(
        result, out, source=str(folder), calib=str(calib), n_calib=n_calib, seq_len=seq_len
    )
    return result


def _bits(text: str) -> int | None:
    return None if text.lower() in ("none", "16", "fp") else int(text)


def configure(parser: argparse.ArgumentParser) -> None:
    """The options of ``dartquant quantize``."""
    parser.add_argument("--model", required=True, help="local transformers checkpoint folder")
    parser.add_argument("--out", required=True, help="folder for the quantised checkpoint")
    parser.add_argument("--calib", required=True, help="tokenised text file (.npy, .pt or ints)")
    parser.add_argument("--method", default="dartquant", choices=METHODS)
    parser.add_argument(
        "--w-bits", type=_bits, default=4, help="weight bits (none: full precision)"
    )
    parser.add_argument("--a-bits", type=_bits, default=4, help="activation bits")
    parser.add_argument("--kv-bits", type=_bits, default=4, help="KV-cache bits")
    parser.add_argument("--weight-quant", default="rtn", choices=("rtn", "gptq"))
    parser.add_argument("--n-calib", type=int, default=32, help="calibration windows")
    parser.add_argument("--seq-len", type=int, default=64, help="tokens per window")
    parser.add_argument("--eval", default=None, help="tokenised text file for perplexity")
    parser.add_argument("--seed", type=int, default=0)


def run(args: argparse.Namespace) -> int:
    """``dartquant quantize``: quantise, save, and print perplexities when ``--eval`` is given."""
    from dartquant.model import perplexity

    try:
        result = quantize_checkpoint(
            args.model,
            args.out,
            args.calib,
            method=args.method,
            w_bits=args.w_bits,
            a_bits=args.a_bits,
            kv_bits=args.kv_bits,
            weight_quant=args.weight_quant,
            n_calib=args.n_calib,
            seq_len=args.seq_len,
            seed=args.seed,
        )
        print(f"saved {args.method} W{args.w_bits}A{args.a_bits}KV{args.kv_bits} to {args.out}")
        if args.eval is not None:
            ids = read_token_file(args.eval)
            for label, m in (("full precision", result.fp_model), ("quantised", result.model)):
                print(f"perplexity ({label}): {perplexity(m, ids, args.seq_len):.4f}")
    except (ValueError, TypeError) as exc:
        print(f"error: {exc}")
        return 2
    return 0
