import copy
import math

import numpy as np
import pytest
import torch

from dictpfl import (
    Federation,
    HEContext,
    decode,
    decompose_model,
    make_federated_digits,
    run_federated,
)
from paperkit.testing import assert_param_error


@pytest.fixture(scope="module")
def run(federation, ref_data, ref_model, he):
    """run(method, **options): one federated run of the reference setting (2 rounds)."""

    def go(method, **kw):
        kw.setdefault("rounds", 2)
        return run_federated(
            method, ref_data, clients=2, model=ref_model, federation=federation, he=he, **kw
        )

    return go


@pytest.fixture(scope="module")
def dict_run(run):
    return run("dictpfl", keep_payloads=True)


def test_dictpfl_messages_hold_only_ciphertexts_and_round_ids(dict_run, ref_model):
    # the manifests of everything the server received and sent
    kinds = {m["kind"] for m in dict_run.manifests}
    assert kinds == {"join", "round", "update", "global", "end"}
    for m in dict_run.manifests:
        if m["kind"] in ("update", "global"):
            assert m["plain_bytes"] == 0 and m["meta"] == [] and m["n_ct"] >= 1
        elif m["kind"] == "join":
            assert m["meta"] == ["n_samples", "n_shared"] and m["n_ct"] == 0
        else:
            assert m["n_ct"] == 0 and m["plain_bytes"] == 0 and m["meta"] == []
    # no dictionary or residual tensor is inside any payload the server received
    layer = decompose_model(copy.deepcopy(ref_model), 8).body[0]
    needles = [layer.D[:, 0].numpy().tobytes()[:64], layer.W_res[0].numpy().tobytes()[:64]]
    assert dict_run.payloads and all(n not in p for p in dict_run.payloads for n in needles)


def test_ciphertext_count_and_logged_bytes(dict_run):
    # ⌈|m_t| / 4096⌉ ciphertexts per update; bytes = Σ payload lengths
    assert dict_run.n_shared == 8 * 64 + 8 * 256 + 2570
    assert dict_run.n_sent[0] == dict_run.n_shared  # round 0 keeps everything
    expected_kept = math.ceil(0.3 * dict_run.n_shared)
    assert expected_kept < dict_run.n_sent[1] < dict_run.n_shared
    for t in range(2):
        ups = [m for m in dict_run.manifests if m["kind"] == "update" and m["round"] == t]
        assert len(ups) == 2
        assert all(m["n_ct"] == math.ceil(dict_run.n_sent[t] / 4096) for m in ups)
        logged = [m for m in dict_run.manifests if m["round"] == t]
        assert dict_run.bytes_up[t] == sum(m["bytes"] for m in logged if m["dir"] == "up")
        assert dict_run.bytes_down[t] == sum(m["bytes"] for m in logged if m["dir"] == "down")
        assert all(m["ct_bytes"] > 100_000 for m in ups)  # real N = 8192 ciphertexts


def test_server_never_holds_the_key_and_cannot_decrypt(dict_run, he):
    assert dict_run.server_has_secret_key is False
    server = HEContext.from_bytes(he.public())
    other = HEContext.create()
    for payload in dict_run.payloads:
        msg = decode(payload)
        if msg.kind != "update":
            continue
        with pytest.raises(ValueError, match="secret"):
            server.decrypt(msg.ct)
        # what the clients' key reads as a small update, another key reads as noise
        assert np.max(np.abs(he.decrypt(msg.ct))) < 1
        assert np.median(np.abs(other.decrypt(msg.ct))) > 1e3


def test_dictionaries_stay_frozen_and_clients_stay_in_sync(dict_run, ref_model):
    # across real rounds: D and W_res bit-identical to the initial decomposition
    fresh = dict(decompose_model(copy.deepcopy(ref_model), 8).named_buffers())
    for frozen in dict_run.frozen:
        assert set(frozen) == {"body.0.D", "body.0.W_res", "body.1.D", "body.1.W_res"}
        for name, buf in frozen.items():
            assert torch.equal(buf, fresh[name]), name
    np.testing.assert_array_equal(dict_run.final[0], dict_run.final[1])


def test_encrypted_round_equals_plaintext_round(run):
    # same seeds, with and without CKKS; differences are CKKS noise only
    enc = run("dictpfl", rounds=1)
    plain = run("dictpfl", rounds=1, encrypt=False)
    assert not any(m["n_ct"] for m in plain.manifests)
    diff = np.max(np.abs(enc.final[0] - plain.final[0]))
    assert 0 < diff < 1e-3  # not bit-identical: the ciphertexts really carried the update


def test_byte_ordering_and_baselines(run, dict_run):
    # bytes(dictpfl) < bytes(depe_only) < bytes(fedhe_full)
    depe = run("depe_only")
    full = run("fedhe_full")
    total = {h.method: h.bytes_up.sum() + h.bytes_down.sum() for h in (dict_run, depe, full)}
    assert total["dictpfl"] < total["depe_only"] < total["fedhe_full"]
    ups = [m for m in full.manifests if m["kind"] == "update"]
    assert all(m["n_ct"] == math.ceil(85002 / 4096) == 21 for m in ups)
    assert (depe.n_sent == depe.n_shared).all()
    # selective encryption: 10 % encrypted, the other 90 % exposed in plaintext
    sel = run("fedml_he", rounds=1)
    up = [m for m in sel.manifests if m["kind"] == "update"]
    assert all(m["n_ct"] == 3 and m["plain_bytes"] == 4 * (85002 - 8501) for m in up)
    assert sel.bytes_up.sum() > dict_run.bytes_up[1] and sel.setup_bytes > 0


def test_run_is_deterministic_under_seed(run, dict_run):
    # same seed -> same accuracy trajectory (times aside)
    again = run("dictpfl")
    np.testing.assert_array_equal(again.acc, dict_run.acc)
    a = run("dictpfl", encrypt=False, seed=3)
    b = run("dictpfl", encrypt=False, seed=3)
    np.testing.assert_array_equal(a.final[0], b.final[0])


def test_dropped_client_loses_nothing(run):
    # client 1 crashes after round 1 starts: the round completes with client 0 alone, and
    # client 1 still receives the global update, so every client ends with the same tables
    h = run("dictpfl", rounds=3, drop={1: [1]}, round_timeout=3.0)
    assert h.participants == [[0, 1], [0], [0, 1]]
    assert len(h.acc) == 3
    np.testing.assert_array_equal(h.final[0], h.final[1])


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
    # a client whose features do not match the shared model's input
    bad = make_federated_digits(clients=2, seed=0)
    bad.clients[1] = (bad.clients[1][0][:, :32], bad.clients[1][1])
    err = assert_param_error(run_federated, "dictpfl", bad, **kw, param="data")
    assert "client 1" in str(err)
    assert_param_error(make_federated_digits, clients=1, param="clients")


@pytest.mark.parametrize(
    ("option", "value"),
    [("batch_size", 0), ("lr", -1.0), ("local_epochs", 0), ("drop", {25: [0]}), ("decay", 1.0)],
)
def test_configuration_is_refused_before_any_process_starts(ref_data, option, value):
    # the whole configuration is checked in the launcher: no process is spawned, no model trained
    fed = Federation(2)
    try:
        assert_param_error(
            run_federated,
            "dictpfl",
            ref_data,
            clients=2,
            federation=fed,
            param=option,
            **{option: value},
        )
        assert not fed.started
    finally:
        fed.close()
