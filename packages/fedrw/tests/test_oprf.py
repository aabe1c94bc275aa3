import numpy as np
import pytest

from fedrw import OPRFKey, blind, unblind


def test_unblind_evaluate_blind_equals_direct_prf():
    """Check 2: unblind(evaluate(blind(x))) == F_k(x) for 200 random items and random r."""
    rng = np.random.default_rng(0)
    items = [rng.bytes(int(rng.integers(1, 64))) for _ in range(200)]
    key = OPRFKey.generate()  # OS CSPRNG
    queries, state = blind(items)  # fresh r_x from the OS CSPRNG
    got = unblind([key.evaluate(q) for q in queries], state)
    assert got == [key.prf(x) for x in items]
    assert len(set(got)) == 200  # a PRF on distinct inputs


def test_blinding_hides_the_item_and_keys_differ():
    items = [b"same"] * 3
    q1, _ = blind(items)
    assert len(set(q1)) == 3  # fresh r_x: the same item gives unlinkable queries
    k1, k2 = OPRFKey.generate(), OPRFKey.generate()
    assert k1.prf(b"x") != k2.prf(b"x")


def test_seeded_generation_is_reproducible():
    a = OPRFKey.generate(np.random.default_rng(5)).prf(b"x")
    b = OPRFKey.generate(np.random.default_rng(5)).prf(b"x")
    assert a == b


def test_evaluate_refuses_points_off_the_curve():
    key = OPRFKey.generate()
    bad = next(bytes([i]) * 32 for i in range(256) if not _on_curve(bytes([i]) * 32))
    with pytest.raises(ValueError, match="'point_x'"):
        key.evaluate(bad)


def _on_curve(x: bytes) -> bool:
    from fedrw.curve import lift

    try:
        lift(x)
    except ValueError:
        return False
    return True
