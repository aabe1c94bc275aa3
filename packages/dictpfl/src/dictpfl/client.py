"""The client process: local training, masking, encryption; decryption of the global update.

Round t of a client k (weights and tables of the global model in sync on every client):

1. E local epochs of Adam from the global shared vector g → ``Δ_k = θ_k − g`` (flattened);
   with error feedback, the discarded part of the previous round is added first.
2. Keep the coordinates of the round's mask (PrME's shared mask, FedML-HE's sensitive set, or
   all), encrypt them (or send plaintext for the baselines that do), send one payload.
3. On the server's reply: decrypt, scatter into a zero vector of length P → ``Δ̄_t``,
   ``g += Δ̄_t``, fold ``Δ̄_t`` into the PrME importance.

Times are CPU times of this process (``time.process_time``), so clients that share cores here
are timed as if each had its own machine.
"""

from __future__ import annotations

import io
import time
from multiprocessing.connection import Connection
from typing import Any

import numpy as np
import torch
from torch import nn

from dictpfl.depe import decompose_model, flatten_tables, lookup_parameters, unflatten_into
from dictpfl.he import HEContext
from dictpfl.messages import decode, encode
from dictpfl.model import MLP, accuracy
from dictpfl.prme import PrMEMask

__all__ = ["client_main"]

DICT_METHODS = ("dictpfl", "depe_only")
PRUNED_METHODS = ("dictpfl", "prme_only")


def build_model(job: dict[str, Any]) -> nn.Module:
    """The job's pretrained model, decomposed by DePE for the dictionary methods."""
    model = MLP(job["n_features"], job["hidden"], job["n_classes"])
    model.load_state_dict(torch.load(io.BytesIO(job["model_state"]), weights_only=True))
    if job["method"] in DICT_METHODS:
        decompose_model(model, job["rank"])
    return model


def local_train(model: nn.Module, X: torch.Tensor, y: torch.Tensor, job: dict, gen) -> None:
    """E epochs of Adam (fresh state each round) over shuffled mini-batches."""
    opt = torch.optim.Adam(lookup_parameters(model), lr=job["lr"])
    model.train()
    for _ in range(job["local_epochs"]):
        for idx in torch.randperm(len(y), generator=gen).split(job["batch_size"]):
            opt.zero_grad()
            nn.functional.cross_entropy(model(X[idx]), y[idx]).backward()
            opt.step()


def sensitivity(model: nn.Module, X: torch.Tensor, y: torch.Tensor, batch_size: int) -> np.ndarray:
    """FedML-HE's per-parameter sensitivity: mean |gradient| over mini-batches."""
    total = torch.zeros(sum(p.numel() for p in lookup_parameters(model)), dtype=torch.float64)
    batches = list(torch.arange(len(y)).split(batch_size))
    for idx in batches:
        model.zero_grad()
        nn.functional.cross_entropy(model(X[idx]), y[idx]).backward()
        total += torch.cat([p.grad.reshape(-1) for p in lookup_parameters(model)]).abs().double()
    model.zero_grad()
    return (total / len(batches)).numpy()


def _run_job(job: dict[str, Any], fl: Connection) -> dict[str, Any]:
    torch.manual_seed(job["seed"])
    k, method = job["client_id"], job["method"]
    model = build_model(job)
    X, y = (torch.from_numpy(a) for a in job["data"])
    X_test, y_test = (torch.from_numpy(a) for a in job["test"])
    he = HEContext.from_bytes(job["he_secret"], secret=True) if job["he_secret"] else None
    encrypt = job["encrypt"] and he is not None
    g = flatten_tables(model)  # the global shared vector (float32, as in the model)
    P = g.numel()
    pruner = None
    if method in PRUNED_METHODS:
        pruner = PrMEMask(
            P, job["prune_ratio"], job["reactivation"], job["decay"], seed=job["mask_seed"]
        )
    residual = torch.zeros(P, dtype=torch.float64)
    fl.send_bytes(encode("join", -1, meta={"n_samples": len(y), "n_shared": P}))
    sensitive = None
    if method == "fedml_he":
        score = sensitivity(model, X, y, job["batch_size"])
        fl.send_bytes(encode("sens", -1, ct=he.encrypt(score)))
        reply = decode(fl.recv_bytes())
        agreed = he.decrypt(reply.ct)
        n_top = max(1, int(np.ceil(job["fedml_frac"] * P)))
        sensitive = torch.zeros(P, dtype=torch.bool)
        sensitive[torch.from_numpy(np.argsort(-agreed, kind="stable")[:n_top].copy())] = True
    stats: list[dict[str, Any]] = []
    mask = torch.ones(P, dtype=torch.bool)
    while True:
        msg = decode(fl.recv_bytes())
        if msg.kind == "end":
            break
        t = msg.round
        if msg.kind == "round":
            row: dict[str, Any] = {"round": t, "sent": t not in job["drop_rounds"]}
            stats.append(row)
            if pruner is not None:
                mask = pruner.mask(t)
            elif sensitive is not None:
                mask = sensitive
            if not row["sent"]:  # simulated drop-out: crash after receiving the round start
                continue
            c0 = time.process_time()
            gen = torch.Generator().manual_seed(job["seed"] * 1_000_003 + 7919 * t + k)
            local_train(model, X, y, job, gen)
            delta = (flatten_tables(model) - g).double() + residual
            c1 = time.process_time()
            if job["error_feedback"]:
                residual = torch.where(mask, 0.0, delta)
            if method == "fedml_he":
                ct = he.encrypt(delta[mask].numpy())
                plain = delta[~mask].numpy().astype(np.float32)
            elif encrypt:
                ct, plain = he.encrypt(delta[mask].numpy()), None
            else:
                ct, plain = [], delta[mask].numpy().astype(np.float32)
            payload = encode("update", t, ct=ct, plain=plain)
            c2 = time.process_time()
            fl.send_bytes(payload)
            row.update(t_compute=c1 - c0, t_encrypt=c2 - c1)
        elif msg.kind == "global":
            c0 = time.process_time()
            step = torch.zeros(P, dtype=torch.float64)
            if msg.ct:
                step[mask] = torch.from_numpy(he.decrypt(msg.ct))
            if msg.plain is not None:  # FedML-HE's plaintext part, or an unencrypted method
                step[~mask if msg.ct else mask] = torch.from_numpy(msg.plain.astype(np.float64))
            g = (g.double() + step).float()
            unflatten_into(model, g)
            if pruner is not None:
                pruner.update(step)
            row = stats[-1]
            row["t_decrypt"] = time.process_time() - c0
            row["n_sent"] = int(mask.sum())
            if k == 0:
                model.eval()
                row["acc"] = accuracy(model, X_test, y_test)
    frozen = {
        name: buf.clone() for name, buf in model.named_buffers() if name.endswith((".D", ".W_res"))
    }
    return {"client": k, "stats": stats, "final": g.numpy(), "frozen": frozen, "P": P}


def _warm_up() -> None:
    """One tiny training step, so torch's one-time start-up costs (lazy imports, first
    autograd and optimizer calls) are not charged to the first method run in this process."""
    model = MLP(4, [4], 2)
    local_train(model, torch.zeros(2, 4), torch.zeros(2, dtype=torch.long), _WARM_JOB, None)


_WARM_JOB = {"lr": 1e-3, "local_epochs": 1, "batch_size": 2}


def client_main(control: Connection, fl: Connection) -> None:
    """Process entry: run the jobs the launcher sends on ``control`` until it sends None."""
    torch.set_num_threads(1)
    _warm_up()
    while True:
        job = control.recv()
        if job is None:
            return
        try:
            control.send(_run_job(job, fl))
        except (EOFError, OSError):
            return
        except Exception as exc:  # reported to the launcher, which raises it
            while decode(fl.recv_bytes()).kind != "end":  # keep the server's sends flowing
                pass
            control.send({"error": f"client {job.get('client_id')}: {exc!r}"})
