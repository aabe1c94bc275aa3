import json
import math
import os
import subprocess
import sys

import pytest

from subtrack.train import main

ARGS = ["--steps", "6", "--dim", "32", "--layers", "1", "--rank", "4", "--update-interval", "2"]
ARGS += ["--batch", "4", "--ctx", "16", "--eval-every", "3", "--n-tokens", "6000"]


@pytest.mark.slow  # three processes importing torch and transformers: ~40 s of CPU
def test_torchrun_two_gloo_processes_stay_in_sync(tmp_path):
    """``torchrun --nproc-per-node 2 -m subtrack.train``: the env:// rendezvous, DDP over gloo,
    and SubTrack++'s subspace updates on the averaged gradients keep both replicas identical."""
    out = tmp_path / "run.json"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"]
    cmd += ["-m", "subtrack.train", *ARGS, "--out", str(out)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["world_size"] == 2
    a, b = result["param_checksums"]
    assert a == b  # bitwise: both ranks took the same steps
    # one process on the same seed draws only rank 0's batches: a different trajectory
    single = tmp_path / "single.json"
    assert main([*ARGS, "--out", str(single)]) == 0
    alone = json.loads(single.read_text())
    assert alone["world_size"] == 1
    assert alone["param_checksums"][0] != a
    assert all(math.isfinite(loss) for _, _, loss in result["curve"])


def test_entry_point_refuses_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="steps"):
        main(["--steps", "0", "--out", str(tmp_path / "x.json")])
    with pytest.raises(SystemExit):
        main(["--method", "SGD"])
