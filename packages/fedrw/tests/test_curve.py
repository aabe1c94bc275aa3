import hashlib

from cryptography.hazmat.primitives.asymmetric import ec

from fedrw import hash_to_curve
from fedrw.curve import CURVE, ORDER, lift, scalar_key, scalar_mult


def test_hash_to_curve_valid_deterministic_distinct():
    """Check 1: 1k samples give valid compressed points, the same twice, all distinct."""
    items = [f"sample {i}".encode() for i in range(1000)]
    points = [hash_to_curve(x) for x in items]
    for p in points:
        assert len(p) == 33 and p[0] == 2
        ec.EllipticCurvePublicKey.from_encoded_point(CURVE, p)  # raises when off the curve
    assert points == [hash_to_curve(x) for x in items]
    assert len(set(points)) == 1000


def test_hash_to_curve_is_try_and_increment():
    """H(x) is the first counter whose SHA-256("fedrw/h2c" || x || ctr) is an x-coordinate."""
    item = b"abc"
    for ctr in range(256):
        candidate = hashlib.sha256(b"fedrw/h2c" + item + bytes([ctr])).digest()
        try:
            lift(candidate)
        except ValueError:
            continue
        assert hash_to_curve(item) == b"\x02" + candidate
        break


def test_scalar_mult_sign_ambiguity_cancels():
    """x(s*lift(x(P))) = x(s*P) for both P and -P: the x-only chain is consistent."""
    p = hash_to_curve(b"point")[1:]
    a, b = 12345, 67890
    left = scalar_mult(scalar_key(b), scalar_mult(scalar_key(a), p))
    right = scalar_mult(scalar_key(a * b % ORDER), p)
    assert left == right
