import numpy as np
import pytest
from cryptography.exceptions import InvalidTag

from fedrw import OPRFKey, blind, build_label_table, lookup_labels, unblind
from fedrw.labels import ROW_BYTES, decode_table, encode_table, label_tag


def _psi(holder_counts, querier_items, pad_to):
    key = OPRFKey.generate()
    table = build_label_table(key, holder_counts, pad_to)
    queries, state = blind(querier_items)
    return lookup_labels(unblind([key.evaluate(q) for q in queries], state), table), key, table


def test_labelled_psi_recovers_counts_exactly():
    """Check 3: c_j(x) for shared items, 0 otherwise."""
    holder = {b"a": 3, b"b": 1, b"c": 7, b"d": 2**31}
    querier = [b"c", b"x", b"a", b"d", b"y"]
    counts, _, table = _psi(holder, querier, pad_to=10)
    assert counts == [7, 0, 3, 2**31, 0]
    assert len(table) == 10


def test_tampered_ciphertext_fails_authentication():
    """Check 3: a flipped bit in a ciphertext raises, never a wrong count."""
    key = OPRFKey.generate()
    table = build_label_table(key, {b"a": 3}, pad_to=1)
    tag, ct = table[0]
    tampered = [(tag, ct[:-1] + bytes([ct[-1] ^ 1]))]
    with pytest.raises(InvalidTag):
        lookup_labels([key.prf(b"a")], tampered)
    ct_body = ct[:12] + bytes([ct[12] ^ 1]) + ct[13:]
    with pytest.raises(InvalidTag):
        lookup_labels([key.prf(b"a")], [(tag, ct_body)])


def test_ciphertext_under_the_wrong_key_fails_authentication():
    """Check 3: a row whose ciphertext was encrypted under another item's key raises."""
    key = OPRFKey.generate()
    table = build_label_table(key, {b"a": 3, b"b": 5}, pad_to=2, rng=np.random.default_rng(0))
    rows = dict(table)
    tag_a, tag_b = label_tag(key.prf(b"a")), label_tag(key.prf(b"b"))
    assert lookup_labels([key.prf(b"a"), key.prf(b"b")], table) == [3, 5]
    with pytest.raises(InvalidTag):
        lookup_labels([key.prf(b"a")], [(tag_a, rows[tag_b])])


def test_other_key_finds_nothing():
    key, other = OPRFKey.generate(), OPRFKey.generate()
    table = build_label_table(key, {b"a": 3}, pad_to=4)
    assert lookup_labels([other.prf(b"a")], table) == [0]


def test_padding_and_wire_format():
    key = OPRFKey.generate()
    table = build_label_table(key, {b"a": 1, b"b": 2}, pad_to=6)
    data = encode_table(table)
    assert len(data) == 6 * ROW_BYTES and decode_table(data) == table
    assert len({tag for tag, _ in table}) == 6  # dummies look like rows


def test_pad_to_smaller_than_the_table_is_refused():
    """Check 12: pad_to below the number of items is a ValueError naming pad_to."""
    with pytest.raises(ValueError, match="'pad_to'"):
        build_label_table(OPRFKey.generate(), {b"a": 1, b"b": 2}, pad_to=1)
