"""The round-robin (circle) schedule of the pairwise intersections (the paper's parallel
orchestration).

Fix client K-1 (or a bye slot when K is odd) and rotate the others: in round r, position p meets
position m-1-p (m = K rounded up to even). Every unordered pair meets exactly once, no client twice
in a round, in K-1 rounds for even K and K rounds (each with one bye) for odd K. All pairs of a
round run concurrently, so the wall time grows with the rounds (linear in K) instead of with the
K(K-1)/2 pairs.
"""

from __future__ import annotations

from paperkit import check_int

__all__ = ["round_robin_schedule", "sequential_schedule"]

MAX_CLIENTS = 1024


def round_robin_schedule(k: int) -> list[list[tuple[int, int]]]:
    """Rounds of disjoint pairs ``(i, j)``, i < j, covering every pair of ``range(k)`` once.

    NaN policy: not applicable (integer input).

    >>> round_robin_schedule(4)
    [[(0, 3), (1, 2)], [(1, 3), (0, 2)], [(2, 3), (0, 1)]]
    >>> len(round_robin_schedule(5))
    5
    """
    k = check_int("k", "round_robin_schedule", k, low=2, high=MAX_CLIENTS)
    m = k + (k % 2)  # slot m-1 is the bye when k is odd
    others = list(range(m - 1))
    rounds = []
    for r in range(m - 1):
        ring = others[r:] + others[:r]
        pairs = [(ring[0], m - 1)] + [(ring[p], ring[m - 1 - p]) for p in range(1, m // 2)]
        rounds.append([(min(a, b), max(a, b)) for a, b in pairs if a < k and b < k])
    return rounds


def sequential_schedule(k: int) -> list[list[tuple[int, int]]]:
    """The sequential baseline: one pair per round, K(K-1)/2 rounds.

    >>> sequential_schedule(3)
    [[(0, 1)], [(0, 2)], [(1, 2)]]
    """
    k = check_int("k", "sequential_schedule", k, low=2, high=MAX_CLIENTS)
    return [[(i, j)] for i in range(k) for j in range(i + 1, k)]
