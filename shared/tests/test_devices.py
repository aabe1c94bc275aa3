import sys

import pytest
import torch

from paperkit import devices


def test_cuda_available_agrees_with_torch():
    assert devices.cuda_available() == torch.cuda.is_available()
    assert devices.torch_available()


def test_missing_libraries_answer_false(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy now raises ImportError
    monkeypatch.setitem(sys.modules, "torch", None)
    assert devices.cupy_available() is False
    assert devices.torch_available() is False
    assert devices.cuda_available() is False


def test_triton_needs_a_gpu_or_the_interpreter(monkeypatch):
    pytest.importorskip("triton")
    monkeypatch.setattr(devices, "cuda_available", lambda: False)
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    assert devices.triton_available() is False
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert devices.triton_interpret() and devices.triton_available()
    monkeypatch.setitem(sys.modules, "triton", None)
    assert devices.triton_available() is False


def test_pick_device(monkeypatch):
    monkeypatch.setattr(devices, "cuda_available", lambda: False)
    monkeypatch.delenv("PAPERKIT_DEVICE", raising=False)
    assert devices.pick_device() == torch.device("cpu")
    assert devices.pick_device("auto") == torch.device("cpu")
    monkeypatch.setenv("PAPERKIT_DEVICE", "cpu")
    assert devices.pick_device(None) == torch.device("cpu")
    with pytest.raises(RuntimeError, match="no CUDA device"):
        devices.pick_device("cuda")
    with pytest.raises(ValueError, match="The 'device' parameter of pick_device"):
        devices.pick_device("tpu-ish")
    monkeypatch.setattr(devices, "cuda_available", lambda: True)
    monkeypatch.delenv("PAPERKIT_DEVICE")
    assert devices.pick_device().type == "cuda"
