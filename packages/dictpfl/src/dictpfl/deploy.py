"""``dictpfl setup``: the trusted setup of a Flower deployment, written to disk.

It writes one directory per client (its data shard, the test split and the CKKS context with
the secret key) and one for the server (the public context, the pretrained model and the jobs'
public configuration). Copy ``client-k/`` to client k's machine only; the server's machine gets
``server/`` only. Then start Flower's deployment runtime (the README shows the commands): each
SuperNode runs ``dictpfl.clientapp:client_app`` with ``--node-config "setup-dir='...'"`` and the
SuperLink runs ``dictpfl.serverapp:server_app`` with the run config ``server-dir='...'``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dictpfl.config import METHODS, ClientSetup, JobConfig
from paperkit import check_choice, check_int

__all__ = ["configure", "run", "write_setup"]


def write_setup(
    out: str | Path,
    clients: int = 4,
    methods: tuple[str, ...] = ("dictpfl",),
    rounds: int = 20,
    seed: int = 0,
) -> Path:
    """Write ``out/server`` and ``out/client-<k>`` for the reference setting (digits, the MLP
    64-256-256 pretrained on the public split, Dirichlet(0.5) shards); return ``out``."""
    owner = "write_setup"
    clients = check_int("clients", owner, clients, low=2)
    for m in methods:
        check_choice("methods", owner, m, METHODS)
    rounds = check_int("rounds", owner, rounds, low=1)
    seed = check_int("seed", owner, seed, low=0)
    import torch

    from dictpfl.data import make_federated_digits
    from dictpfl.he import HEContext
    from dictpfl.model import pretrained_mlp

    out = Path(out)
    data = make_federated_digits(clients=clients, seed=seed)
    model = pretrained_mlp(data, seed=seed)
    he = HEContext.create()
    server = out / "server"
    server.mkdir(parents=True, exist_ok=True)
    (server / "public.ctx").write_bytes(he.public())
    torch.save(model.state_dict(), server / "model.pt")
    hidden = tuple(layer.out_features for layer in model.body)
    jobs = [
        JobConfig(
            method=m,
            job=j,
            rounds=rounds,
            seed=seed,
            prune_ratio=0.0 if m == "depe_only" else 0.7,
            encrypt=m != "plaintext",
            n_features=data.n_features,
            hidden=hidden,
            n_classes=data.n_classes,
        ).to_record()
        for j, m in enumerate(methods)
    ]
    (server / "jobs.json").write_text(json.dumps({"clients": clients, "jobs": jobs}, indent=1))
    for k in range(clients):
        ClientSetup(
            partition=k,
            secret_context=he.to_bytes(secret=True),
            data=tuple(t.numpy() for t in data.clients[k]),
            test=tuple(t.numpy() for t in data.test),
            log_dir="",
        ).save(out / f"client-{k}")
    return out


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, help="directory to write server/ and client-k/")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--methods", nargs="+", default=["dictpfl"], choices=METHODS)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)


def run(args: argparse.Namespace) -> int:
    out = write_setup(args.out, args.clients, tuple(args.methods), args.rounds, args.seed)
    print(f"wrote {out}/server (public context, model, jobs) and {args.clients} client dirs")
    return 0
