"""DartQuant on checkpoints as a user has them: a tiny Llama and a tiny Qwen2 written to disk,
quantised by the ``dartquant quantize`` command, saved with ``save_pretrained`` and loaded back."""

import numpy as np
import pytest
import torch
import transformers

from dartquant import load_quantized, perplexity, read_token_file, tiny_llama
from dartquant.cli import main
from paperkit.testing import assert_param_error


@pytest.mark.parametrize("family", ["llama", "qwen2"])
def test_quantize_command_on_a_checkpoint(tmp_path, family, capsys):
    torch.manual_seed(0)
    model = tiny_llama(64, 32, 2, 4, 2, family=family).eval()
    model.save_pretrained(tmp_path / "ckpt")
    ids = torch.randint(0, 64, (3000,), generator=torch.Generator().manual_seed(1))
    np.save(tmp_path / "calib.npy", ids[:2000].numpy())
    (tmp_path / "eval.txt").write_text(" ".join(map(str, ids[2000:].tolist())))
    argv = ["quantize", "--model", str(tmp_path / "ckpt"), "--out", str(tmp_path / "q")]
    argv += ["--calib", str(tmp_path / "calib.npy"), "--eval", str(tmp_path / "eval.txt")]
    argv += ["--method", "quarot", "--a-bits", "8", "--kv-bits", "8", "--n-calib", "8"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "perplexity (quantised)" in printed

    # the saved weights are a plain transformers checkpoint ...
    plain = transformers.AutoModelForCausalLM.from_pretrained(tmp_path / "q")
    assert type(plain) is type(model)
    # ... and load_quantized rebuilds the quantised model the command evaluated
    loaded = load_quantized(tmp_path / "q")
    assert loaded.model.layers[0].self_attn.dartquant_hadamard
    assert loaded.model.layers[0].self_attn.dartquant_kv_bits == 8
    ppl = perplexity(loaded, read_token_file(tmp_path / "eval.txt"), 64)
    assert f"perplexity (quantised): {ppl:.4f}" in printed
    # quantised W4A8KV8 stays close to the original model (the rotation keeps its function)
    ppl_fp = perplexity(model, ids[2000:], 64)
    assert abs(ppl - ppl_fp) < 0.2 * ppl_fp


def test_clear_errors_for_missing_paths(tmp_path, capsys):
    argv = ["quantize", "--model", str(tmp_path / "nope"), "--out", str(tmp_path / "q")]
    assert main([*argv, "--calib", str(tmp_path / "nope.npy")]) == 2
    assert "'model_path' parameter of quantize_checkpoint must be an existing folder" in (
        capsys.readouterr().out
    )
    assert_param_error(read_token_file, tmp_path / "nope.txt", param="path")
