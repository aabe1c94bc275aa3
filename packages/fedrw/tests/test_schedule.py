import itertools

import pytest

from fedrw import round_robin_schedule, sequential_schedule


@pytest.mark.parametrize("k", range(2, 17))
def test_round_robin_covers_every_pair_once(k):
    """Check 5: every unordered pair once, no client twice per round, K-1 / K rounds."""
    rounds = round_robin_schedule(k)
    assert len(rounds) == (k - 1 if k % 2 == 0 else k)
    pairs = [p for rnd in rounds for p in rnd]
    assert sorted(pairs) == list(itertools.combinations(range(k), 2))
    for rnd in rounds:
        clients = [c for p in rnd for c in p]
        assert len(clients) == len(set(clients))
        assert len(rnd) == k // 2  # every round is full (one bye for odd k)


def test_sequential_is_one_pair_per_round():
    rounds = sequential_schedule(5)
    assert len(rounds) == 10 and all(len(r) == 1 for r in rounds)


def test_fewer_than_two_clients_is_refused():
    """Check 12: K < 2 is a ValueError naming k."""
    with pytest.raises(ValueError, match="'k'"):
        round_robin_schedule(1)
