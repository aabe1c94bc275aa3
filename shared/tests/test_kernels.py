import sys
import types

import pytest
import torch

from paperkit import kernels
from paperkit.testing import requires_cupy

SOURCE = 'extern "C" __global__ void add_one(float* x, int n) {\n'
SOURCE += "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) x[i] += 1.0f;\n}\n"


@pytest.fixture
def kernel_package(tmp_path, monkeypatch):
    """A throwaway importable package shipping kernels/add.cu."""
    pkg = tmp_path / "kpkg"
    (pkg / "kernels").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "kernels" / "add.cu").write_text(SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "kpkg"
    sys.modules.pop("kpkg", None)
    kernels.clear_kernel_cache()


@pytest.fixture
def fake_cupy(monkeypatch):
    """A stand-in CuPy that records compilations, with a GPU reported present."""
    compiled = []

    class RawModule:
        def __init__(self, code, options, name_expressions):
            compiled.append((code, options, name_expressions))

    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(RawModule=RawModule))
    monkeypatch.setattr(kernels, "cupy_available", lambda: True)
    kernels.clear_kernel_cache()
    return compiled


def test_path_resolution_and_source(kernel_package):
    assert kernels.kernel_path(kernel_package, "kernels/add.cu").name == "add.cu"
    assert kernels.kernel_source(kernel_package, "kernels/add.cu") == SOURCE


def test_missing_file_and_missing_package(kernel_package):
    with pytest.raises(FileNotFoundError, match="'kernels/nope.cu' not found in package 'kpkg'"):
        kernels.kernel_path(kernel_package, "kernels/nope.cu")
    with pytest.raises(ModuleNotFoundError):
        kernels.kernel_path("no_such_package_here", "kernels/add.cu")


def test_compiles_once_per_source_and_options(kernel_package, fake_cupy):
    first = kernels.load_cuda_module(kernel_package, "kernels/add.cu")
    again = kernels.load_cuda_module(kernel_package, "kernels/add.cu")
    assert first is again and len(fake_cupy) == 1
    assert fake_cupy[0] == (SOURCE, ("--std=c++17",), None)
    other = kernels.load_cuda_module(kernel_package, "kernels/add.cu", options=("-DFAST",))
    assert other is not first and len(fake_cupy) == 2
    kernels.clear_kernel_cache()
    kernels.load_cuda_module(kernel_package, "kernels/add.cu")
    assert len(fake_cupy) == 3


def test_no_cupy_is_a_clear_import_error(kernel_package, monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(ImportError, match=r"pip install 'kpkg\[cuda\]'"):
        kernels.load_cuda_module(kernel_package, "kernels/add.cu")


def test_cupy_without_gpu_is_a_clear_runtime_error(kernel_package, monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace())
    monkeypatch.setattr(kernels, "cupy_available", lambda: False)
    with pytest.raises(RuntimeError, match="sees no CUDA device"):
        kernels.load_cuda_module(kernel_package, "kernels/add.cu")


def test_wrong_path_is_reported_before_the_gpu(kernel_package, monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(FileNotFoundError):
        kernels.load_cuda_module(kernel_package, "kernels/typo.cu")


def test_dlpack_errors_on_the_cpu():
    with pytest.raises(ValueError, match="needs a CUDA tensor; got a tensor on cpu"):
        kernels.to_cupy(torch.zeros(3))
    with pytest.raises(TypeError, match="expects a torch.Tensor"):
        kernels.to_cupy([1.0, 2.0])
    with pytest.raises(TypeError, match="expects an array with __dlpack__"):
        kernels.to_torch([1.0])


def test_to_torch_is_zero_copy_for_any_dlpack_array():
    import numpy as np

    a = np.arange(4.0)
    t = kernels.to_torch(a)
    a[0] = 10.0
    assert t[0].item() == 10.0


@pytest.mark.gpu
@requires_cupy
def test_round_trip_and_launch_on_the_gpu(kernel_package):
    x = torch.zeros(1000, device="cuda")
    module = kernels.load_cuda_module(kernel_package, "kernels/add.cu")
    with kernels.on_torch_stream():
        module.get_function("add_one")((4,), (256,), (kernels.to_cupy(x), 1000))
    assert torch.equal(x, torch.ones_like(x))  # launched in place on the shared memory
    back = kernels.to_torch(kernels.to_cupy(x))
    assert back.data_ptr() == x.data_ptr()
