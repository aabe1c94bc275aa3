"""Every public entry point with one valid call; paperkit's suite derives the bad calls (NaN and
inf, size 0, wrong rank, mismatched shapes, wrong dtype and type, out-of-range values) and
requires a ValueError or TypeError naming the argument before any work starts."""

import tempfile
from pathlib import Path

import torch
from torch import nn

import dartquant as dq
from paperkit.testing import BadInputs, Call, fresh

torch.manual_seed(0)
VOCAB = 16
MODEL = dq.tiny_llama(VOCAB, 16, 1, 2, n_kv_heads=1, ffn_dim=32).eval()  # head_dim 8
TOKENS = torch.randint(0, VOCAB, (2, 8))
STREAM = torch.randint(0, VOCAB, (40,))
OUT_OF_VOCAB = torch.tensor([[0, VOCAB], [1, 2]])
ACTS = torch.randn(64, 8)
ACTS3 = torch.randn(64, 4, 8)
R1 = dq.random_orthogonal(16, 1)
R2S = [dq.random_orthogonal(8, 2)[None]]
X = torch.randn(32, 8, dtype=torch.float64)
INDEFINITE = -torch.eye(8, dtype=torch.float64)
SCRATCH = Path(tempfile.mkdtemp(prefix="dartquant-bad-inputs-"))
CHECKPOINT = SCRATCH / "checkpoint"
MODEL.save_pretrained(CHECKPOINT)
TOKEN_FILE = SCRATCH / "ids.txt"
TOKEN_FILE.write_text(" ".join(str(int(i)) for i in torch.randint(0, VOCAB, (200,))))
WORDS_FILE = SCRATCH / "words.txt"
WORDS_FILE.write_text("not token ids")
MISSING = SCRATCH / "missing"


def _result():
    return dq.pipeline(MODEL, TOKENS, "quarot", w_bits=4, a_bits=8, kv_bits=8)


SAVED = dq.save_quantized(_result(), SCRATCH / "saved")
_outs = iter(range(10**6))


def _out():
    return SCRATCH / f"out-{next(_outs)}"


MODEL_ARGS = {"model": MODEL, "w_bits": 4, "a_bits": 4, "kv_bits": 4, "a_clip": 0.9}
QUANT_ARGS = {
    **MODEL_ARGS,
    "kv_clip": 1.0,
    "weight_quant": "gptq",
    "calib_tokens": TOKENS,
    "shapes": {"calib_tokens": "N T"},
    "bad": {"w_bits": [1, 17], "kv_clip": [0.0, 2.0], "calib_tokens": [OUT_OF_VOCAB]},
}
ROTATIONS = {
    "model": MODEL,
    "R1": R1,
    "R2s": R2S,
    "online_hadamard": True,
    "shapes": {"R1": "16 16"},
    "bad": {"R1": [2 * R1], "R2s": [[torch.eye(4)[None]], R2S * 2, R1]},
}


SUITE = BadInputs(
    dq,
    [
        Call(
            dq.CayleySGD,
            params=fresh(lambda: [nn.Parameter(dq.random_orthogonal(4))]),
            lr=0.1,
            momentum=0.9,
            bad={
                "params": [[torch.randn(3, 4)], [], torch.eye(3)],
                "lr": [0.0, -1.0],
                "momentum": [1.0, -0.1],
            },
        ),
        Call(
            dq.QROrth,
            d=8,
            n_mats=1,
            init="random",
            seed=0,
            call={"x": torch.randn(5, 8)},
            shapes={"x": "B 8"},
            accepts={"x": ["rank"]},  # any leading dims: x[..., d]
            bad={"d": [0, 10**9], "n_mats": [0], "seed": [-1]},
        ),
        Call(
            dq.QROrth,
            name="QROrth_heads",
            d=8,
            n_mats=2,
            call={"x": torch.randn(5, 2, 8)},
            shapes={"x": "B 2 8"},
            accepts={"x": ["rank"]},  # any leading dims: x[..., n_mats, d]
        ),
        Call(
            dq.QuantLinear,
            in_features=8,
            out_features=4,
            w_bits=4,
            a_bits=8,
            a_clip=0.9,
            w_group=4,
            call={"x": torch.randn(2, 3, 8)},
            shapes={"x": "B T 8"},
            accepts={"x": ["rank"]},  # any leading dims: x[..., in_features]
            bad={
                "in_features": [0, 10**12],
                "out_features": [10**12],
                "w_bits": [1, 17],
                "a_clip": [0.0, 1.5],
                "w_group": [3, 0],
            },
        ),
        Call(
            dq.tiny_llama,
            {"family": "llama"},
            vocab=VOCAB,
            dim=16,
            n_layers=1,
            n_heads=2,
            n_kv_heads=1,
            ffn_dim=32,
            ctx=8,
            bad={
                "vocab": [0, 10**12],
                "dim": [6, 10**7],
                "n_layers": [10**12],
                "n_heads": [3],
                "n_kv_heads": [3],
                "ffn_dim": [10**12],
                "ctx": [0],
                "family": ["gpt2"],
            },
        ),
        Call(
            dq.calibrate_rotation,
            acts=ACTS,
            epochs=1,
            batch_size=32,
            lr=1e-3,
            momentum=0.9,
            subset=0.5,
            optimizer="sgd",
            parametrization="qr",
            init="random",
            normalize="rms",
            seed=0,
            accumulation_steps=1,
            cosine_lr=False,
            eval_every=0,
            time_limit_s=10.0,
            shapes={"acts": "T d"},
            # acts[None] is a valid [T, H, h] (one token of 64 heads); inf: no time limit
            accepts={"acts": ["rank"], "time_limit_s": ["nonfinite"]},
            bad={
                "epochs": [0],
                "batch_size": [0],
                "subset": [0.0, 1.5],
                "lr": [0.0],
                "momentum": [1.0],
                "eval_every": [-1],
                "time_limit_s": [0.0],
            },
        ),
        Call(
            dq.calibrate_rotation,
            name="calibrate_rotation_heads",
            acts=ACTS3,
            n_kv_heads=2,
            epochs=1,
            shapes={"acts": "T H h"},
            bad={"n_kv_heads": [3, 0]},
        ),
        Call(
            dq.normalize_acts,
            x=ACTS,
            normalize="rms",
            shapes={"x": "T d"},
            accepts={"x": ["rank"]},  # [T, d] and [T, H, h] both
        ),
        Call(dq.rotate_acts, x=ACTS, R=dq.random_orthogonal(8), shapes={"x": "T d", "R": "d d"}),
        Call(
            dq.rotate_acts,
            name="rotate_acts_heads",
            x=ACTS3,
            R=torch.stack([dq.random_orthogonal(8, 1), dq.random_orthogonal(8, 2)]),
            shapes={"x": "T H h", "R": "K h h"},
            bad={"R": [torch.stack([torch.eye(8)] * 3)]},
        ),
        # NaN propagates through the loss and the linear Hadamard maps by documented design
        Call(dq.whip_loss, x=ACTS, accepts={"x": ["nan", "inf", "rank"]}),
        Call(
            dq.fwht, x=torch.randn(3, 8), shapes={"x": "B 8"}, accepts={"x": ["nan", "inf", "rank"]}
        ),
        Call(
            dq.online_hadamard,
            x=torch.randn(3, 8),
            shapes={"x": "B 8"},
            accepts={"x": ["nan", "inf", "rank"]},
        ),
        Call(
            dq.hadamard,
            d=8,
            dtype=torch.float64,
            bad={"d": [0, 3, 2**30], "dtype": [torch.int64, "float64"]},
        ),
        Call(dq.random_hadamard, d=8, seed=1, bad={"d": [6, 2**30], "seed": [-1]}),
        Call(dq.random_orthogonal, d=6, seed=1, bad={"d": [0, 10**9], "seed": [-1]}),
        Call(
            dq.decode,
            ids=torch.tensor([40, 41]),
            shapes={"ids": "N"},
            accepts={"ids": ["empty"]},  # no ids, no text
            bad={"ids": [torch.tensor([len(dq.VOCAB)])]},
        ),
        Call(dq.encode, text="Hi!", accepts={"text": ["choice"]}, bad={"text": ["caf\u00e9"]}),
        Call(dq.synthetic_text, n_chars=50, seed=0, bad={"n_chars": [0, 10**13], "seed": [-1]}),
        Call(
            dq.token_splits,
            n_chars=200,
            seed=0,
            val_fraction=0.1,
            bad={"n_chars": [0, 10**13], "val_fraction": [0.0, 1.0]},
        ),
        Call(
            dq.heavy_tailed_acts,
            n_tokens=32,
            d=8,
            n_outliers=2,
            outlier_scale=10.0,
            nu=5.0,
            seed=0,
            bad={
                "n_tokens": [0, 10**12],
                "d": [0, 10**12],
                "n_outliers": [-1, 9],
                "outlier_scale": [0.0],
                "nu": [-1.0],
            },
        ),
        Call(
            dq.fake_quantize,
            x=torch.randn(4, 8),
            bits=4,
            sym=True,
            clip_ratio=1.0,
            shapes={"x": "N d"},
            accepts={"x": ["rank"]},  # quantised along the last dim, any leading dims
            bad={"bits": [1, 17], "clip_ratio": [0.0, 1.1]},
        ),
        Call(
            dq.quantize_act_per_token,
            x=torch.randn(2, 3, 8),
            bits=4,
            clip_ratio=0.9,
            sym=False,
            accepts={"x": ["rank"]},
            bad={"bits": [1], "clip_ratio": [1.5]},
        ),
        Call(
            dq.quantize_weight_rtn,
            W=torch.randn(4, 8),
            bits=4,
            group=4,
            sym=True,
            shapes={"W": "O I"},
            bad={"bits": [17], "group": [3, 0]},
        ),
        Call(
            dq.gptq_quantize,
            W=torch.randn(4, 8, dtype=torch.float64),
            H=X.T @ X,
            bits=4,
            sym=True,
            percdamp=0.01,
            shapes={"W": "O I", "H": "I I"},
            bad={"H": [INDEFINITE], "bits": [1], "percdamp": [0.0, -0.1]},
        ),
        Call(
            dq.perplexity,
            model=MODEL,
            tokens=STREAM,
            seq_len=8,
            batch=4,
            shapes={"tokens": "N"},
            bad={"tokens": [torch.tensor([0, VOCAB] * 10)], "seq_len": [0], "batch": [0]},
        ),
        Call(
            dq.collect_activations,
            model=MODEL,
            tokens=TOKENS,
            batch=1,
            shapes={"tokens": "N T"},
            bad={"model": [nn.Linear(4, 4)], "tokens": [OUT_OF_VOCAB], "batch": [0]},
        ),
        Call(
            dq.calibrate_rotations,
            {"method": "dartquant"},  # `method` is also an option of Call: passed in the dict
            model=MODEL,
            calib_tokens=TOKENS,
            seed=0,
            normalize="rms",
            r1_epochs=1,
            r2_epochs=1,
            e2e_bits=(None, 4, 4),
            e2e_steps=1,
            e2e_lr=0.02,
            e2e_batch=2,
            e2e_time_limit_s=5.0,
            shapes={"calib_tokens": "N T"},
            accepts={"e2e_time_limit_s": ["nonfinite"]},  # inf: no time limit
            bad={
                "calib_tokens": [OUT_OF_VOCAB, torch.zeros(2, 1, dtype=torch.int64)],
                "r1_epochs": [0],
                "r2_epochs": [0],
                "e2e_bits": [(1, 4, 4), (4, 4), 4],
                "e2e_steps": [0],
                "e2e_lr": [0.0],
                "e2e_batch": [0],
                "e2e_time_limit_s": [0.0],
            },
        ),
        Call(
            dq.pipeline,
            {"method": "quarot"},
            model=MODEL,
            calib_tokens=TOKENS,
            w_bits=4,
            a_bits=8,
            kv_bits=8,
            weight_quant="rtn",
            seed=0,
            r1_epochs=1,
            shapes={"calib_tokens": "N T"},
            bad={"calib_tokens": [OUT_OF_VOCAB], "w_bits": [1], "kv_bits": [17], "r1_epochs": [0]},
        ),
        Call(dq.fuse_rotations, **ROTATIONS),
        Call(dq.rotated_state, **ROTATIONS),
        Call(
            dq.inject_channel_outliers,
            model=MODEL,
            scale=30.0,
            n_channels=2,
            seed=0,
            bad={"scale": [0.0, -1.0], "n_channels": [-1, 1000], "seed": [-1]},
        ),
        Call(dq.quantize_model, **QUANT_ARGS),
        Call(
            dq.set_online_hadamard,
            model=fresh(lambda: dq.tiny_llama(VOCAB, 16, 1, 2)),
            enabled=True,
        ),
        Call(
            dq.set_kv_bits,
            model=fresh(lambda: dq.tiny_llama(VOCAB, 16, 1, 2)),
            bits=4,
            clip_ratio=1.0,
            bad={"bits": [1, 17], "clip_ratio": [0.0, 1.5]},
        ),
        Call(dq.read_token_file, path=TOKEN_FILE, bad={"path": [MISSING, WORDS_FILE, SCRATCH]}),
        Call(dq.save_quantized, result=fresh(_result), out=fresh(_out), bad={"result": [MODEL]}),
        Call(dq.load_quantized, path=SAVED, bad={"path": [MISSING, CHECKPOINT, TOKEN_FILE]}),
        Call(
            dq.quantize_checkpoint,
            {"method": "quarot"},
            model_path=CHECKPOINT,
            out=fresh(_out),
            calib=TOKEN_FILE,
            w_bits=4,
            a_bits=8,
            kv_bits=8,
            weight_quant="rtn",
            n_calib=4,
            seq_len=8,
            seed=0,
            bad={
                "model_path": [MISSING, SCRATCH],
                "calib": [MISSING, WORDS_FILE],
                "w_bits": [1],
                "n_calib": [0],
                "seq_len": [1, 10**6],
                "seed": [-1],
            },
        ),
        Call(dq.quantized_copy, **QUANT_ARGS),
    ],
    exempt={"QuantResult": "the record pipeline returns, built from checked values"},
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
