import socket
import subprocess
import sys
import textwrap

import pytest
import torch

# The workers run from a script file so that torch.multiprocessing can pickle them.
WORKER = textwrap.dedent(
    """
    import os
    import sys

    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel

    from subtrack import SubTrackAdamW, TinyLlama, make_param_groups, synthetic_corpus


    def worker(rank, world, port, out):
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        torch.set_num_threads(1)
        dist.init_process_group("gloo", rank=rank, world_size=world)
        torch.manual_seed(0)
        model = DistributedDataParallel(TinyLlama(29, dim=16, layers=1, heads=2))
        opt = SubTrackAdamW(make_param_groups(model, rank=4, update_interval=2), lr=1e-2)
        data = synthetic_corpus(4000, seed=rank)  # each rank sees different data
        for s in range(4):
            x = data[s * 36 : (s + 1) * 36].view(4, 9)
            logits = model(x[:, :-1]).flatten(0, 1)
            loss = nn.functional.cross_entropy(logits, x[:, 1:].flatten())
            opt.zero_grad()
            loss.backward()
            opt.step()
        torch.save([p.detach() for p in model.parameters()], os.path.join(out, f"{rank}.pt"))
        dist.destroy_process_group()


    if __name__ == "__main__":
        mp.spawn(worker, args=(2, int(sys.argv[1]), sys.argv[2]), nprocs=2, join=True)
    """
)


@pytest.mark.slow  # two spawned processes importing torch: far beyond the default run's budget
def test_ddp_gloo_two_processes_stay_in_sync(tmp_path):
    from subtrack import TinyLlama

    script = tmp_path / "ddp_worker.py"
    script.write_text(WORKER)
    with socket.socket() as sock:  # a free port for the rendezvous
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    subprocess.run([sys.executable, str(script), str(port), str(tmp_path)], check=True, timeout=120)
    a, b = (torch.load(tmp_path / f"{r}.pt") for r in (0, 1))
    torch.manual_seed(0)
    start = list(TinyLlama(29, dim=16, layers=1, heads=2).parameters())
    assert all(torch.equal(p, q) for p, q in zip(a, b, strict=True))
    assert not all(torch.equal(p, q) for p, q in zip(a, start, strict=True))
