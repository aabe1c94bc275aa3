import torch

from adtp.data import CANCEL, CLS, NEGATIVE, POSITIVE, SEP, needle_task


def test_seeded_determinism():
    a, b = needle_task(50, seed=4), needle_task(50, seed=4)
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
    assert not torch.equal(a.input_ids, needle_task(50, seed=5).input_ids)


def test_structure_and_majority_label():
    x = needle_task(300, min_len=16, max_len=64, seed=1)
    n = x.attention_mask.sum(1)
    assert int(n.min()) >= 16 and int(n.max()) <= 64
    for b in range(300):
        row = x.input_ids[b, : n[b]].tolist()
        assert row[0] == CLS and row[-1] == SEP and SEP not in row[1:-1]
        sig = x.signal_mask[b]
        ids = x.input_ids[b][sig].tolist()
        assert 1 <= len(ids) <= 4
        votes = sum(1 if t in POSITIVE else -1 for t in ids)
        assert votes != 0 and x.labels[b] == int(votes > 0)
        for j in torch.nonzero(sig).flatten().tolist():  # a real signal is never cancelled
            assert x.input_ids[b, j + 1] != CANCEL
        for j in range(1, int(n[b]) - 1):  # every CANCEL follows a signal-looking decoy
            if row[j] == CANCEL:
                assert row[j - 1] in POSITIVE + NEGATIVE and not bool(sig[j - 1])


def test_decoy_free_has_no_cancel_and_decoys_appear():
    assert not bool((needle_task(200, decoys=False, seed=2).input_ids == CANCEL).any())
    assert bool((needle_task(200, decoys=True, seed=2).input_ids == CANCEL).any())


def test_parity_label():
    x = needle_task(100, label="parity", seed=3)
    pos = torch.isin(x.input_ids, torch.tensor(POSITIVE)) & x.signal_mask
    assert torch.equal(x.labels, pos.sum(1) % 2)
