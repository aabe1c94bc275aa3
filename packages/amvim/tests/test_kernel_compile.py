"""The kernels gate for the Triton selective scan: Triton's offline compile for sm_90 of every
launch configuration the dispatcher can pick (no GPU needed), within the register, spill and
shared-memory budgets reported by the ptxas that ships with Triton."""

import pytest

from amvim.kernels import MAX_TRITON_STATE
from amvim.kernels.scan_triton import MAX_TILE, launch_config
from paperkit.kernel_gate import run_offline

SHARED_BYTES = 227 * 1024  # sm_90's shared memory per block (opt-in maximum)


def test_launch_config_covers_every_state_size():
    for n in range(1, MAX_TRITON_STATE + 1):
        cfg = launch_config(n)
        assert cfg["NP"] >= max(n, 16) and cfg["NP"] & (cfg["NP"] - 1) == 0  # a power of two
        assert cfg["NP"] < 2 * max(n, 16)  # the smallest one
        assert 1 <= cfg["BLOCK_E"] <= 32 and cfg["BLOCK_E"] * cfg["NP"] <= MAX_TILE


@pytest.mark.slow  # 15 compiles: about 15 CPU seconds, in a subprocess
def test_every_configuration_compiles_for_sm90_without_spills():
    pytest.importorskip("triton.backends.nvidia.compiler")
    from amvim.kernels.offline import configurations

    rows = run_offline("amvim.kernels.offline")
    assert [(r["dtype"], r["NP"]) for r in rows] == [
        (c.label["dtype"], c.label["NP"]) for c in configurations()
    ]
    for r in rows:
        assert r["violations"] == [], r
        assert r["registers"] <= 255, r
        assert r["spill_bytes"] == 0, r  # the state tile fits in registers
        assert r["stack_bytes"] == 0, r
        assert r["shared_bytes"] <= SHARED_BYTES, r
