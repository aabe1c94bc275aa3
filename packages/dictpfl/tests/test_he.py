import numpy as np
import pytest
import tenseal as ts

from dictpfl import HEContext
from paperkit.testing import assert_param_error


def test_round_trip_and_chunking(he):
    # |v| <= 1 round-trips to 1e-4; ceil(P / 4096) ciphertexts
    v = np.random.default_rng(0).uniform(-1, 1, 9000)
    chunks = he.encrypt(v)
    assert he.slots == 4096 and len(chunks) == 3 == he.n_chunks(9000)
    out = he.decrypt(chunks)
    assert out.shape == v.shape
    assert np.max(np.abs(out - v)) < 1e-4


def test_server_weighted_sum_decrypts_to_the_weighted_mean(he):
    rng = np.random.default_rng(1)
    vs = [rng.uniform(-1, 1, 5000) for _ in range(3)]
    w = [0.2, 0.3, 0.5]
    server = HEContext.from_bytes(he.public())
    agg = server.weighted_sum([he.encrypt(v) for v in vs], w)
    expected = sum(wk * v for wk, v in zip(w, vs, strict=True))
    assert np.max(np.abs(he.decrypt(agg) - expected)) < 1e-4


def test_public_context_cannot_decrypt(he):
    # the server's context has no secret key and TenSEAL refuses to decrypt
    server = HEContext.from_bytes(he.public())
    assert not server.has_secret_key and he.has_secret_key
    chunks = he.encrypt(np.ones(10))
    with pytest.raises(ValueError, match="secret"):
        server.decrypt(chunks)
    with pytest.raises(ValueError, match="secret"):
        ts.ckks_vector_from(server.context, chunks[0]).decrypt()
    # even bytes that hold the key come out public unless secret=True is asked for
    assert not HEContext.from_bytes(he.to_bytes(secret=True)).has_secret_key
    assert_param_error(HEContext.from_bytes, he.public(), secret=True, param="secret")


def test_another_key_decrypts_to_noise(he):
    other = HEContext.create()
    v = np.linspace(-1, 1, 100)
    garbage = other.decrypt(he.encrypt(v))
    assert np.median(np.abs(garbage - v)) > 1e3


def test_overflowing_values_and_bad_vectors_raise(he):
    assert he.max_abs == 2.0**19  # 60-bit first prime, 2^40 scale
    assert_param_error(he.encrypt, np.array([1.0, 2.0**20]), param="vec")
    assert_param_error(he.encrypt, np.array([np.nan]), param="vec")
    assert_param_error(he.encrypt, np.zeros((2, 2)), param="vec")
    assert_param_error(HEContext.create, n=1000, param="n")
    assert_param_error(HEContext.create, coeff_bits=(60, 60), param="coeff_bits")


def test_mismatched_client_shapes_raise(he):
    server = HEContext.from_bytes(he.public())
    a, b = he.encrypt(np.zeros(5000)), he.encrypt(np.zeros(3000))
    err = assert_param_error(server.weighted_sum, [a, b], [0.5, 0.5], param="list_of_chunks")
    assert "same model shapes" in str(err)
    c = he.encrypt(np.zeros(4096 + 7))
    assert_param_error(server.weighted_sum, [a, c], [0.5, 0.5], param="list_of_chunks")
    assert_param_error(server.weighted_sum, [a, a], [0.5], param="weights")
