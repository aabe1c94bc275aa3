"""The Flower ClientApp: local training, masking and encryption; decryption of the aggregates.

A client answers four messages of the server (:mod:`dictpfl.serverapp`):

* ``query`` / setup: the job's public :class:`~dictpfl.config.JobConfig` and the pretrained
  model. The client builds its model (decomposed by DePE for the dictionary methods), keeps
  its state in the node's ``context.state`` and answers its sample count and P, the length of
  the shared vector (FedML-HE: also its encrypted sensitivity scores).
* ``query`` / agree (FedML-HE only): the summed encrypted sensitivity scores; the client keeps
  the top ⌈p·P⌉ coordinates as its sensitive (encrypted) set.
* ``train`` round t: first every aggregate it has not applied yet (a client that missed a
  round catches up here), then E local epochs of Adam from the global shared vector g,
  ``Δ_k = θ_k − g`` (plus, with error feedback, what the previous mask discarded), the
  coordinates of the round's mask encrypted (PrME's shared mask, FedML-HE's sensitive set, or
  all); the reply is the ciphertexts and the number of coordinates they hold.
* ``evaluate`` round t: the round's aggregate c_t: decrypt, scatter into a zero vector of length
  P → ``Δ̄_t``, ``g += Δ̄_t``, fold ``Δ̄_t`` into the PrME importance; client 0 reports the test
  accuracy.
* ``query`` / finish: the last aggregates, then the client writes its own report (per-round
  CPU times, g, its frozen dictionaries) into its log directory.

The secret key comes from the client's :class:`~dictpfl.config.ClientSetup` and never leaves
it. Times are CPU times of the ClientApp (``time.process_time``), so clients that share cores
here are timed as if each had its own machine.
"""

from __future__ import annotations

import functools
import hashlib
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch
from flwr.app import Array, ArrayRecord, ConfigRecord, Context, Message, MetricRecord, RecordDict
from flwr.clientapp import ClientApp
from torch import nn

from dictpfl.config import ClientSetup, JobConfig
from dictpfl.depe import decompose_model, flatten_tables, lookup_parameters, unflatten_into
from dictpfl.he import HEContext
from dictpfl.model import MLP, accuracy
from dictpfl.prme import PrMEMask
from dictpfl.wire import ciphertext_record, ciphertexts, plaintext

__all__ = ["DICT_METHODS", "PRUNED_METHODS", "client_app", "make_client_app"]

DICT_METHODS = ("dictpfl", "depe_only")
PRUNED_METHODS = ("dictpfl", "prme_only")


def local_train(model: nn.Module, X: torch.Tensor, y: torch.Tensor, cfg: JobConfig, gen) -> None:
    """E epochs of Adam (fresh state each round) over shuffled mini-batches."""
    opt = torch.optim.Adam(lookup_parameters(model), lr=cfg.lr)
    model.train()
    for _ in range(cfg.local_epochs):
        for idx in torch.randperm(len(y), generator=gen).split(cfg.batch_size):
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


class _Client:
    """One client's state for one job, loaded from and saved to the node's context."""

    def __init__(self, setup: ClientSetup, context: Context):
        self.setup = setup
        self.context = context
        st = context.state
        self.cfg = JobConfig.from_record(st["job"])
        self.he = (
            HEContext.from_bytes(setup.secret_context, secret=True)
            if self.cfg.encrypt and setup.secret_context is not None
            else None
        )
        self.model = self._model(st["model"].to_torch_state_dict())
        vec = {k: st["vectors"][k].numpy() for k in st["vectors"]}
        self.g = torch.from_numpy(vec["g"].copy())
        self.residual = torch.from_numpy(vec["residual"].copy())
        self.sensitive = (
            torch.from_numpy(vec["sensitive"].astype(bool)) if "sensitive" in vec else None
        )
        self.pruner = None
        if self.cfg.method in PRUNED_METHODS:
            self.pruner = PrMEMask(
                self.g.numel(),
                self.cfg.prune_ratio,
                self.cfg.reactivation,
                self.cfg.decay,
                seed=self.cfg.seed,
            )
            if "importance" in vec:
                self.pruner.importance = vec["importance"].copy()
        self.applied = int(st["progress"]["applied"])
        self.stats = st["stats"]

    def _model(self, state: dict[str, torch.Tensor]) -> nn.Module:
        cfg = self.cfg
        model = MLP(cfg.n_features, list(cfg.hidden), cfg.n_classes)
        if cfg.method in DICT_METHODS:
            decompose_model(model, cfg.rank)
        model.load_state_dict(state)
        return model

    def save(self) -> None:
        st = self.context.state
        st["model"] = ArrayRecord(self.model.state_dict())
        vec = {"g": self.g.numpy(), "residual": self.residual.numpy()}
        if self.sensitive is not None:
            vec["sensitive"] = self.sensitive.numpy().astype(np.uint8)
        if self.pruner is not None and self.pruner.importance is not None:
            vec["importance"] = self.pruner.importance
        st["vectors"] = _arrays(vec)
        st["progress"] = ConfigRecord({"applied": self.applied, "job": self.cfg.job})

    def mask(self, t: int) -> torch.Tensor:
        """The coordinates sent in round t (PrME's mask, FedML-HE's sensitive set, or all)."""
        if self.pruner is not None:
            return self.pruner.mask(t)
        if self.sensitive is not None:
            return self.sensitive
        return torch.ones(self.g.numel(), dtype=torch.bool)

    def apply(self, content: RecordDict) -> float:
        """Apply, in round order, every aggregate ``agg.<t>`` in ``content`` newer than the last
        one applied; return the CPU seconds spent."""
        c0 = time.process_time()
        rounds = sorted(int(k.split(".")[1]) for k in content if k.startswith("agg."))
        for t in rounds:
            if t <= self.applied:
                continue
            if t != self.applied + 1:
                raise ValueError(f"aggregate of round {t} arrived before round {self.applied + 1}")
            record = content[f"agg.{t}"]
            mask = self.mask(t)
            step = torch.zeros(self.g.numel(), dtype=torch.float64)
            ct = ciphertexts(record)
            plain = plaintext(record)
            if ct:
                step[mask] = torch.from_numpy(self.he.decrypt(ct))
            if plain is not None:  # FedML-HE's plaintext part, or an unencrypted method
                step[~mask if ct else mask] = torch.from_numpy(plain.astype(np.float64))
            self.g = (self.g.double() + step).float()
            unflatten_into(self.model, self.g)
            if self.pruner is not None:
                self.pruner.update(step)
            self.applied = t
        return time.process_time() - c0

    def data(self) -> tuple[torch.Tensor, torch.Tensor]:
        X, y = self.setup.data
        return torch.from_numpy(np.array(X, np.float32)), torch.from_numpy(np.array(y, np.int64))

    def record(self, t: int, **values: float) -> None:
        for k, v in values.items():
            self.stats[f"{k}.{t}"] = float(v)


def _arrays(vectors: dict[str, np.ndarray]) -> ArrayRecord:
    return ArrayRecord({k: Array(np.ascontiguousarray(v)) for k, v in vectors.items()})


def _warm_up(cfg: JobConfig) -> None:
    """One tiny training step, so torch's one-time start-up costs (lazy imports, first autograd
    and optimizer calls) are paid at setup, not charged to round 0."""
    model = MLP(4, [4], 2)
    local_train(model, torch.zeros(2, 4), torch.zeros(2, dtype=torch.long), cfg, None)


def _setup(setup: ClientSetup, msg: Message, context: Context) -> Message:
    cfg = JobConfig.from_record(msg.content["config"])
    _warm_up(cfg)
    torch.manual_seed(cfg.seed)
    model = MLP(cfg.n_features, list(cfg.hidden), cfg.n_classes)
    model.load_state_dict(msg.content["model"].to_torch_state_dict())
    if cfg.method in DICT_METHODS:
        decompose_model(model, cfg.rank)
    g = flatten_tables(model)
    st = context.state
    for key in list(st):
        del st[key]
    st["job"] = ConfigRecord(cfg.to_record())
    st["model"] = ArrayRecord(model.state_dict())
    vectors = {"g": g.numpy(), "residual": np.zeros(g.numel())}
    reply = RecordDict()
    X, y = (torch.from_numpy(np.array(a)) for a in setup.data)
    if cfg.method == "fedml_he":
        he = HEContext.from_bytes(setup.secret_context, secret=True)
        reply["sens"] = ciphertext_record(he.encrypt(sensitivity(model, X, y, cfg.batch_size)))
    st["vectors"] = _arrays(vectors)
    st["progress"] = ConfigRecord({"applied": -1, "job": cfg.job})
    st["stats"] = MetricRecord({})
    reply["info"] = ConfigRecord(
        {"partition": setup.partition, "n_samples": len(y), "n_shared": g.numel(), "job": cfg.job}
    )
    return Message(reply, reply_to=msg)


def _agree(setup: ClientSetup, msg: Message, context: Context) -> Message:
    """FedML-HE: decrypt the summed sensitivity and keep the top ⌈p·P⌉ coordinates."""
    client = _Client(setup, context)
    agreed = client.he.decrypt(ciphertexts(msg.content["sens"]))
    n_top = max(1, int(np.ceil(client.cfg.fedml_frac * client.g.numel())))
    sensitive = torch.zeros(client.g.numel(), dtype=torch.bool)
    sensitive[torch.from_numpy(np.argsort(-agreed, kind="stable")[:n_top].copy())] = True
    client.sensitive = sensitive
    client.save()
    return Message(RecordDict({"info": ConfigRecord({"n_sensitive": n_top})}), reply_to=msg)


def _fault(setup: ClientSetup, cfg: JobConfig, t: int) -> str | None:
    return setup.faults.get(cfg.job, {}).get(t)


def _train(setup: ClientSetup, msg: Message, context: Context) -> Message:
    client = _Client(setup, context)
    cfg = client.cfg
    conf = msg.content["config"]
    t = int(conf["round"])
    if int(conf["job"]) != cfg.job:
        raise ValueError(f"a message of job {conf['job']} reached a client of job {cfg.job}")
    t_decrypt = client.apply(msg.content)
    fault = _fault(setup, cfg, t)
    if fault == "drop":  # the client fails mid-round; Flower answers with an error reply
        client.save()
        raise RuntimeError(f"client {setup.partition} dropped out in round {t}")
    mask = client.mask(t)
    c0 = time.process_time()
    X, y = client.data()
    gen = torch.Generator().manual_seed(cfg.seed * 1_000_003 + 7919 * t + setup.partition)
    local_train(client.model, X, y, cfg, gen)
    delta = (flatten_tables(client.model) - client.g).double() + client.residual
    unflatten_into(client.model, client.g)  # the model holds g between rounds
    c1 = time.process_time()
    if cfg.error_feedback:
        client.residual = torch.where(mask, 0.0, delta)
    if cfg.method == "fedml_he":
        ct, plain = client.he.encrypt(delta[mask].numpy()), delta[~mask].numpy()
    elif client.he is not None:
        ct, plain = client.he.encrypt(delta[mask].numpy()), None
    else:
        ct, plain = [], delta[mask].numpy()
    if fault == "garbage":
        rng = np.random.default_rng(t)
        ct = [rng.integers(0, 256, len(c), dtype=np.uint8).tobytes() for c in ct]
    elif fault == "resize" and ct:
        ct[-1] = client.he.encrypt(delta[mask].numpy()[-3:-1])[0]
    c2 = time.process_time()
    client.record(
        t, t_compute=c1 - c0, t_encrypt=c2 - c1, t_decrypt=t_decrypt, n_sent=int(mask.sum())
    )
    client.save()
    if fault == "late":
        time.sleep(setup.late_s)
    content = RecordDict(
        {
            "update": ciphertext_record(ct, plain),
            "info": ConfigRecord({"round": t, "job": cfg.job, "n_sent": int(mask.sum())}),
        }
    )
    return Message(content, reply_to=msg)


def _evaluate(setup: ClientSetup, msg: Message, context: Context) -> Message:
    client = _Client(setup, context)
    t = int(msg.content["config"]["round"])
    t_decrypt = client.apply(msg.content)
    metrics = {"applied": client.applied}
    if setup.partition == 0:
        X_test, y_test = (torch.from_numpy(np.array(a)) for a in setup.test)
        client.model.eval()
        metrics["acc"] = accuracy(client.model, X_test, y_test)
    client.record(t, t_decrypt_eval=t_decrypt)
    client.save()
    return Message(RecordDict({"metrics": MetricRecord(metrics)}), reply_to=msg)


def _finish(setup: ClientSetup, msg: Message, context: Context) -> Message:
    client = _Client(setup, context)
    client.apply(msg.content)
    client.save()
    frozen = {
        name: buf.clone()
        for name, buf in client.model.named_buffers()
        if name.endswith((".D", ".W_res"))
    }
    report = {
        "client": setup.partition,
        "job": client.cfg.job,
        "method": client.cfg.method,
        "applied": client.applied,
        "stats": dict(client.stats),
        "final": client.g.numpy().copy(),
        "frozen": frozen,
        "P": client.g.numel(),
    }
    log = Path(setup.log_dir)
    log.mkdir(parents=True, exist_ok=True)
    path = log / f"job-{client.cfg.job}-client-{setup.partition}.pt"
    tmp = path.with_suffix(".tmp")
    torch.save(report, tmp)
    os.replace(tmp, path)
    digest = hashlib.sha256(client.g.numpy().tobytes()).hexdigest()
    return Message(
        RecordDict({"info": ConfigRecord({"digest": digest, "applied": client.applied})}),
        reply_to=msg,
    )


def make_client_app(setup_of: Callable[[Context], ClientSetup]) -> ClientApp:
    """A ClientApp whose node finds its :class:`ClientSetup` with ``setup_of(context)``."""
    app = ClientApp()

    @app.query()
    def query(msg: Message, context: Context) -> Message:
        torch.set_num_threads(1)
        phase = msg.content["config"]["phase"]
        handler = {"setup": _setup, "agree": _agree, "finish": _finish}[phase]
        return handler(setup_of(context), msg, context)

    @app.train()
    def train(msg: Message, context: Context) -> Message:
        torch.set_num_threads(1)
        return _train(setup_of(context), msg, context)

    @app.evaluate()
    def evaluate(msg: Message, context: Context) -> Message:
        torch.set_num_threads(1)
        return _evaluate(setup_of(context), msg, context)

    return app


def setups_by_partition(setups: Sequence[ClientSetup]) -> Callable[[Context], ClientSetup]:
    """For the simulation engine: node ``partition-id`` k gets ``setups[k]``."""
    table = {s.partition: s for s in setups}

    def setup_of(context: Context) -> ClientSetup:
        return table[int(context.node_config["partition-id"])]

    return setup_of


def _setup_from_node_config(context: Context) -> ClientSetup:
    """For a deployment: the node's ``--node-config "setup-dir='...'"`` (see `dictpfl setup`)."""
    return _load_setup(str(context.node_config["setup-dir"]))


@functools.cache
def _load_setup(directory: str) -> ClientSetup:
    return ClientSetup.load(directory)


#: The ClientApp of a Flower deployment (``clientapp = "dictpfl.clientapp:client_app"``).
client_app = make_client_app(_setup_from_node_config)
