import copy
import hashlib
import json
import math
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

import dictpfl.federated
from dictpfl import (
    EncryptedFedAvg,
    HEContext,
    JobConfig,
    ServerLog,
    decompose_model,
    make_federated_digits,
    pretrained_mlp,
    run_federated,
    run_methods,
)
from dictpfl.deploy import write_setup
from dictpfl.wire import ciphertexts, plaintext
from paperkit.testing import assert_param_error


@pytest.fixture(scope="module")
def run(ref_data, ref_model, he):
    """run(methods, **options): the reference setting (2 clients, 2 rounds) on Flower, with
    the ClientApps in this process."""

    def go(methods, **kw):
        kw.setdefault("rounds", 2)
        return run_methods(
            methods, ref_data, clients=2, model=ref_model, he=he, engine="inprocess", **kw
        )

    return go


@pytest.fixture(scope="module")
def runs(run):
    return run(("dictpfl", "depe_only", "fedhe_full", "fedml_he"), keep_payloads=True)


@pytest.fixture(scope="module")
def dict_run(runs):
    return runs["dictpfl"]


def test_dictpfl_messages_hold_only_ciphertexts_and_round_ids(dict_run, ref_model):
    # the manifests of every Flower message the server sent and received
    kinds = {(m["dir"], m["kind"]) for m in dict_run.manifests}
    assert kinds == {(d, k) for d in ("up", "down") for k in ("query", "train", "evaluate")}
    for m in dict_run.manifests:
        assert not m["error"]
        if m["kind"] == "train" and m["dir"] == "up":
            assert m["plain_bytes"] == 0 and m["n_ct"] >= 1
            assert m["keys"] == ["info.job", "info.n_sent", "info.round"]
        elif m["kind"] == "evaluate" and m["dir"] == "down":  # the aggregate, encrypted
            assert m["plain_bytes"] == 0 and m["n_ct"] >= 1
        elif m["kind"] == "evaluate":
            assert m["keys"] in (["metrics.acc", "metrics.applied"], ["metrics.applied"])
        elif m["round"] >= 0 and m["kind"] == "train":
            assert m["n_ct"] == 0 and m["plain_bytes"] == 0
    # the only plaintext tensors the server ever sends are the public pretrained weights
    setup = [m for m in dict_run.manifests if m["kind"] == "query" and m["dir"] == "down"]
    n_model = sum(p.numel() for p in ref_model.parameters()) * 4
    assert {m["plain_bytes"] for m in setup} <= {n_model, 0}
    # no dictionary or residual tensor is inside any update message the server received
    layer = decompose_model(copy.deepcopy(ref_model), 8).body[0]
    needles = [layer.D[:, 0].numpy().tobytes()[:64], layer.W_res[0].numpy().tobytes()[:64]]
    assert len(dict_run.payloads) == 2
    assert all(n not in p for p in dict_run.payloads for n in needles)


def test_ciphertext_count_and_counted_bytes(dict_run):
    # ⌈|m_t| / 4096⌉ ciphertexts per update; bytes = Σ serialised message sizes
    assert dict_run.n_shared == 8 * 64 + 8 * 256 + 2570
    assert dict_run.n_sent[0] == dict_run.n_shared  # round 0 keeps everything
    expected_kept = math.ceil(0.3 * dict_run.n_shared)
    assert expected_kept < dict_run.n_sent[1] < dict_run.n_shared
    for t in range(2):
        logged = [m for m in dict_run.manifests if m["round"] == t]
        ups = [m for m in logged if m["kind"] == "train" and m["dir"] == "up"]
        assert len(ups) == 2
        assert all(m["n_ct"] == math.ceil(dict_run.n_sent[t] / 4096) for m in ups)
        assert dict_run.bytes_up[t] == sum(m["bytes"] for m in logged if m["dir"] == "up")
        assert dict_run.bytes_down[t] == sum(m["bytes"] for m in logged if m["dir"] == "down")
        assert all(m["bytes"] > m["ct_bytes"] > 100_000 for m in ups)  # real N = 8192
    assert dict_run.setup_bytes == sum(m["bytes"] for m in dict_run.manifests if m["round"] == -1)


def test_server_never_holds_the_key_and_cannot_decrypt(dict_run, he):
    assert dict_run.server_has_secret_key is False
    server = HEContext.from_bytes(he.public())
    other = HEContext.create()
    assert len(dict_run.updates) == 2
    for ct in dict_run.updates:
        with pytest.raises(ValueError, match="secret"):
            server.decrypt(ct)
        # what the clients' key reads as a small update, another key reads as noise
        assert np.max(np.abs(he.decrypt(ct))) < 1
        assert np.median(np.abs(other.decrypt(ct))) > 1e3


def test_dictionaries_stay_frozen_and_clients_stay_in_sync(dict_run, ref_model):
    # across real rounds: D and W_res bit-identical to the initial decomposition
    fresh = dict(decompose_model(copy.deepcopy(ref_model), 8).named_buffers())
    assert len(dict_run.frozen) == 2
    for frozen in dict_run.frozen:
        assert set(frozen) == {"body.0.D", "body.0.W_res", "body.1.D", "body.1.W_res"}
        for name, buf in frozen.items():
            assert torch.equal(buf, fresh[name]), name
    np.testing.assert_array_equal(dict_run.final[0], dict_run.final[1])
    # what the clients told the server matches their own logs
    digest = hashlib.sha256(dict_run.final[0].tobytes()).hexdigest()
    assert dict_run.digests == {0: digest, 1: digest}


def test_encrypted_round_equals_plaintext_round(run):
    # same seeds, with and without CKKS; differences are CKKS noise only
    enc = run(("dictpfl",), rounds=1)["dictpfl"]
    plain = run(("dictpfl",), rounds=1, encrypt=False)["dictpfl"]
    assert not any(m["n_ct"] for m in plain.manifests)
    diff = np.max(np.abs(enc.final[0] - plain.final[0]))
    assert 0 < diff < 1e-3  # not bit-identical: the ciphertexts really carried the update


def test_byte_ordering_and_baselines(runs, dict_run):
    # bytes(dictpfl) < bytes(depe_only) < bytes(fedhe_full)
    depe, full, sel = runs["depe_only"], runs["fedhe_full"], runs["fedml_he"]
    total = {h.method: h.bytes_up.sum() + h.bytes_down.sum() for h in (dict_run, depe, full)}
    assert total["dictpfl"] < total["depe_only"] < total["fedhe_full"]
    ups = [m for m in full.manifests if m["kind"] == "train" and m["dir"] == "up"]
    assert len(ups) == 4 and all(m["n_ct"] == math.ceil(85002 / 4096) == 21 for m in ups)
    assert (depe.n_sent == depe.n_shared).all()
    # selective encryption: 10 % encrypted, the other 90 % exposed in plaintext
    up = [m for m in sel.manifests if m["kind"] == "train" and m["dir"] == "up"]
    assert all(m["n_ct"] == 3 and m["plain_bytes"] == 4 * (85002 - 8501) for m in up)
    assert sel.bytes_up[0] > dict_run.bytes_up[1] and sel.setup_bytes > full.setup_bytes


def test_run_is_deterministic_under_seed(run, dict_run):
    # same seed -> same accuracy trajectory (times aside); unencrypted -> same tables
    again = run(("dictpfl",))["dictpfl"]
    np.testing.assert_array_equal(again.acc, dict_run.acc)
    a = run(("dictpfl",), encrypt=False, seed=3)["dictpfl"]
    b = run(("dictpfl",), encrypt=False, seed=3)["dictpfl"]
    np.testing.assert_array_equal(a.final[0], b.final[0])


@pytest.fixture(scope="module")
def faulty(he):
    """4 clients, 3 rounds; in round 1 client 1 fails, client 2 sends garbage and client 3
    answers after the timeout; in round 2 client 0 sends a ciphertext of the wrong length."""
    data = make_federated_digits(clients=4, seed=0)
    model = pretrained_mlp(data, (256, 256), epochs=2, seed=0)
    faults = {1: {1: "drop", 2: "garbage", 3: "late"}, 2: {0: "resize"}}
    return run_federated(
        "dictpfl",
        data,
        rounds=3,
        clients=4,
        model=model,
        he=he,
        engine="inprocess",
        faults=faults,
        round_timeout=2.0,
    )


def _check_faulty_run(h):
    assert h.participants[0] == [0, 1, 2, 3]
    assert h.participants[1] == [0]  # 1 failed, 2 rejected, 3 late
    assert 0 not in h.participants[2] and 3 not in h.participants[2]  # 0 rejected, 3 busy
    reasons = {(r["round"], r["client"]): r["reason"] for r in h.rejected}
    assert set(reasons) == {(1, 1), (1, 2), (1, 3), (2, 0)}
    assert "dropped out" in reasons[1, 1]
    assert "other bytes" in reasons[1, 2]
    assert "late reply" in reasons[1, 3]
    assert "of 2 values" in reasons[2, 0]
    # nothing lost: every client, the late one included, ends with the same shared vector
    assert len(h.final) == 4 and len(set(h.digests.values())) == 1 and len(h.digests) == 4
    for f in h.final[1:]:
        np.testing.assert_array_equal(f, h.final[0])
    assert np.isfinite(h.acc).all()


def test_faulty_clients_are_left_out_and_logged(faulty):
    _check_faulty_run(faulty)


@pytest.mark.slow
def test_faulty_clients_on_the_simulation_engine(he):
    # the same run in Flower's simulation engine (Ray workers)
    data = make_federated_digits(clients=4, seed=0)
    model = pretrained_mlp(data, (256, 256), epochs=2, seed=0)
    faults = {1: {1: "drop", 2: "garbage", 3: "late"}, 2: {0: "resize"}}
    h = run_federated(
        "dictpfl", data, rounds=3, clients=4, model=model, he=he, faults=faults, round_timeout=20.0
    )
    _check_faulty_run(h)


@pytest.mark.parametrize("encrypt", [False, True])
def test_weights_are_renormalised_over_the_accepted_clients(he, encrypt):
    # clients 0 and 2 of three answered: w = n_k / (n_0 + n_2), client 1 counts for nothing
    cfg = JobConfig(method="dictpfl", encrypt=encrypt)
    public = HEContext.from_bytes(he.public())
    strategy = EncryptedFedAvg(
        cfg, public, {10: 0, 11: 1, 12: 2}, {10: 1, 11: 2, 12: 3}, ServerLog(0)
    )
    rng = np.random.default_rng(0)
    a, c = rng.normal(size=50).astype(np.float32), rng.normal(size=50).astype(np.float32)
    if encrypt:
        updates = {10: (he.encrypt(a), None, 50), 12: (he.encrypt(c), None, 50)}
    else:
        updates = {10: ([], a, 50), 12: ([], c, 50)}
    record = strategy._aggregate(updates)
    got = he.decrypt(ciphertexts(record)) if encrypt else plaintext(record)
    np.testing.assert_allclose(got, (1 * a + 3 * c) / 4, atol=1e-5)


def test_bad_arguments_raise(ref_data, ref_model):
    assert_param_error(run_federated, "fedavg", ref_data, param="method")
    assert_param_error(run_federated, "dictpfl", ref_data, clients=1, param="clients")
    assert_param_error(run_federated, "dictpfl", ref_data, clients=4, param="clients")
    kw = {"clients": 2, "model": ref_model}
    assert_param_error(
        run_federated, "dictpfl", ref_data, prune_ratio=1.0, **kw, param="prune_ratio"
    )
    assert_param_error(
        run_federated, "dictpfl", ref_data, reactivation=-0.1, **kw, param="reactivation"
    )
    assert_param_error(run_federated, "dictpfl", ref_data, rank=300, **kw, param="rank")
    assert_param_error(run_federated, "dictpfl", ref_data, rank=0, **kw, param="rank")
    assert_param_error(run_federated, "dictpfl", ref_data, engine="ray", **kw, param="engine")
    assert_param_error(run_methods, "dictpfl", ref_data, **kw, param="methods")
    # a client whose features do not match the shared model's input
    bad = make_federated_digits(clients=2, seed=0)
    bad.clients[1] = (bad.clients[1][0][:, :32], bad.clients[1][1])
    err = assert_param_error(run_federated, "dictpfl", bad, **kw, param="data")
    assert "client 1" in str(err)
    assert_param_error(make_federated_digits, clients=1, param="clients")


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("batch_size", 0),
        ("lr", -1.0),
        ("local_epochs", 0),
        ("faults", {25: {0: "drop"}}),
        ("faults", {0: {0: "crash"}}),
        ("decay", 1.0),
        ("setup_timeout", 0),
    ],
)
def test_configuration_is_refused_before_any_app_starts(ref_data, monkeypatch, option, value):
    # the whole configuration is checked in the launcher: no app starts, no model is trained
    def started(*args):
        raise AssertionError("an engine was started")

    monkeypatch.setattr(dictpfl.federated, "_run_engine", started)
    assert_param_error(
        run_federated, "dictpfl", ref_data, clients=2, param=option, **{option: value}
    )


def _wait_for_port(port: int, timeout: float) -> None:
    """Until something listens on 127.0.0.1:``port`` (a server that is still starting)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise TimeoutError(f"nothing listens on port {port} after {timeout} s")


@pytest.mark.slow
def test_flower_deployment_runtime(tmp_path):
    # the same apps on Flower's deployment runtime: a SuperLink, two SuperNodes, `flwr run`
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "FLWR_HOME": str(tmp_path / "flwr"), "OMP_NUM_THREADS": "1"}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    (tmp_path / "flwr").mkdir()
    (tmp_path / "flwr" / "config.toml").write_text(
        '[superlink]\ndefault = "local"\n\n[superlink.local]\n'
        'address = "127.0.0.1:8000"\ninsecure = true\n'
    )
    fl = write_setup(tmp_path / "fl", clients=2, rounds=1)
    app = Path(__file__).resolve().parents[1] / "flower-app"
    procs = [
        subprocess.Popen(
            ["flower-superlink", "--insecure", "--disable-runtime-dependency-installation"],
            env=env,
            cwd=tmp_path,
        )
    ]
    try:
        _wait_for_port(8000, timeout=300)
        for k in range(2):
            procs.append(
                subprocess.Popen(
                    [
                        "flower-supernode", "--insecure", "--superlink", "127.0.0.1:8000",
                        "--port", str(9094 + k), "--node-config", f"setup-dir='{fl}/client-{k}'",
                    ],
                    env=env,
                    cwd=tmp_path,
                )
            )  # fmt: skip
        for k in range(2):
            _wait_for_port(9094 + k, timeout=300)
        run = subprocess.run(
            ["flwr", "run", str(app), "local", "--stream", "--run-config",
             f"server-dir='{fl}/server'"],
            env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        assert "job 0 (dictpfl): 1 rounds" in run.stdout + run.stderr
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(timeout=30)
    log = json.loads((fl / "server" / "log-job-0.json").read_text())
    assert log["rounds"][0]["participants"] == [0, 1] and not log["rejected"]
    assert len(set(log["digests"].values())) == 1
    assert (fl / "client-0" / "log" / "job-0-client-0.pt").is_file()
