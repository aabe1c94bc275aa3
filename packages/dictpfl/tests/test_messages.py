import numpy as np

from dictpfl import decode, encode, manifest


def test_round_trip_and_manifest():
    ct = [b"abc", b"\x00" * 10]
    plain = np.arange(5, dtype=np.float32)
    payload = encode("update", 3, ct=ct, plain=plain, meta={"n_samples": 7})
    msg = decode(payload)
    assert (msg.kind, msg.round, msg.ct, msg.meta) == ("update", 3, ct, {"n_samples": 7})
    np.testing.assert_array_equal(msg.plain, plain)
    m = manifest(payload)
    assert (m["n_ct"], m["ct_bytes"], m["plain_bytes"]) == (2, 13, 20)
    assert m["bytes"] == len(payload) and m["meta"] == ["n_samples"]
    assert decode(encode("round", 0)).plain is None
