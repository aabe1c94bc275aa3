"""The paper's claims, and the rules that give each its verdict from the comparison tables.

Each function takes the rows of :func:`dictpfl.reproduce.summary_rows` (one per method, keyed by
the method's label) for each case of the run and returns one :class:`paperkit.Claim`, whose
verdict follows from the numbers by the rule in its docstring. The paper's claims (abstract and
experiments): against fully encrypted FL (FedHE-Full) DictPFL cuts communication 402–748× and
training time 28–65×; against selective encryption (FedML-HE) it has 51–155× less overhead and is
4–19× faster; its runtime is within 2× of plaintext FL; accuracy is kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from paperkit import Claim

__all__ = [
    "ablation_claim",
    "accuracy_claim",
    "fedhe_claim",
    "fedml_claim",
    "plaintext_time_claim",
]

Rows = Sequence[Mapping[str, Any]]
#: Accuracy points DictPFL may lose against plaintext FedAvg and still "keep accuracy".
ACCURACY_TOLERANCE = 0.02
PLAIN, FULL, FEDML, DICT = "Plaintext FedAvg", "FedHE-Full", "FedML-HE (10%)", "DictPFL"
DEPE, PRME = "DePE only", "PrME only"


def _by_method(rows: Rows) -> dict[str, Mapping[str, Any]]:
    return {r["method"]: r for r in rows}


def _missing(statement: str, paper: str, needed: Sequence[str]) -> Claim:
    return Claim(
        statement,
        paper=paper,
        measured="not run",
        verdict="not testable here",
        why=f"this run did not include {', '.join(needed)}",
    )


def plaintext_time_claim(cases: Mapping[str, Rows]) -> Claim:
    """Headline. Held when, in the first case (the reference setting), DictPFL exposes no
    coordinate in plaintext and its modelled round time is at most 2× plaintext FedAvg's; not
    held otherwise. Later cases are reported in ``measured``."""
    statement = "DictPFL encrypts every shared coordinate at a runtime within 2× of plaintext FL"
    paper = "full encryption, runtime within 2× of plaintext FL"
    first = _by_method(next(iter(cases.values())))
    if DICT not in first or PLAIN not in first:
        return _missing(statement, paper, [DICT, PLAIN])
    ratios = {
        name: _by_method(rows)[DICT]["x time vs plaintext"]
        for name, rows in cases.items()
        if DICT in _by_method(rows) and PLAIN in _by_method(rows)
    }
    exposed = first[DICT]["plaintext-exposed %"]
    ok = exposed == 0 and first[DICT]["x time vs plaintext"] <= 2
    return Claim(
        statement,
        paper=paper,
        measured="; ".join(f"{name}: {r:.2f}× plaintext's time" for name, r in ratios.items())
        + f"; {exposed:g} % of DictPFL's coordinates in plaintext",
        verdict="held" if ok else "not held",
        why="rule: no plaintext coordinate and at most 2× plaintext's modelled round time in the "
        "reference setting (the first case); at this size transfer dominates, and one "
        "ciphertext costs about as much as the plaintext model",
    )


def fedhe_claim(cases: Mapping[str, Rows], n_params: Mapping[str, int], slots: int) -> Claim:
    """Against FedHE-Full: 402–748× less communication and 28–65× less time. The reduction is
    capped by the ciphertext counts, ⌈n_params / slots⌉ : 1; when that cap is below 402 (a model
    far smaller than the paper's) the claim is not testable here; otherwise held when both
    measured ratios reach the paper's lower ends."""
    statement = "Against FedHE-Full, DictPFL cuts communication 402–748× and training time 28–65×"
    paper = "402–748× less communication, 28–65× faster (ViT/BERT-scale models)"
    first_name, first = next(iter(cases.items()))
    rows = _by_method(first)
    if DICT not in rows or FULL not in rows:
        return _missing(statement, paper, [DICT, FULL])
    comm, time = rows[DICT]["x comm vs FedHE-Full"], rows[DICT]["x time vs FedHE-Full"]
    cap = -(-n_params[first_name] // slots)
    if cap < 402:
        verdict = "not testable here"
    else:
        verdict = "held" if comm >= 402 and time >= 28 else "not held"
    return Claim(
        statement,
        paper=paper,
        measured=f"{comm:.1f}× less communication, {time:.1f}× less time ({first_name})",
        verdict=verdict,
        why=f"FedHE-Full sends ⌈{n_params[first_name]} / {slots}⌉ = {cap} ciphertexts per client "
        "and DictPFL one at least, so the reduction cannot pass "
        f"{cap}× here; the paper's ratios need ViT/BERT-scale models (the benchmark shows the "
        "ratio growing with the width)",
    )


def fedml_claim(cases: Mapping[str, Rows]) -> Claim:
    """Against FedML-HE (selective encryption): held when DictPFL sends 51× fewer bytes and is 4×
    faster at least (the paper's lower ends); partly when it is both cheaper and faster; not held
    otherwise."""
    statement = "Against FedML-HE, DictPFL has 51–155× less overhead and is 4–19× faster"
    paper = "51–155× less overhead, 4–19× faster, while FedML-HE leaves most of the update plain"
    first_name, first = next(iter(cases.items()))
    rows = _by_method(first)
    if DICT not in rows or FEDML not in rows:
        return _missing(statement, paper, [DICT, FEDML])
    comm = rows[FEDML]["bytes/round"] / rows[DICT]["bytes/round"]
    time = rows[FEDML]["s/round"] / rows[DICT]["s/round"]
    if comm >= 51 and time >= 4:
        verdict = "held"
    elif comm > 1 and time > 1:
        verdict = "partly"
    else:
        verdict = "not held"
    return Claim(
        statement,
        paper=paper,
        measured=f"{comm:.1f}× fewer bytes, {time:.1f}× faster ({first_name}); FedML-HE sends "
        f"{rows[FEDML]['plaintext-exposed %']:.0f} % of its update in plaintext",
        verdict=verdict,
        why="rule: held at 51× fewer bytes and 4× less time, partly when cheaper and faster",
    )


def accuracy_claim(cases: Mapping[str, Rows]) -> Claim:
    """Held when DictPFL's final accuracy is within 2 points of plaintext FedAvg's in every case;
    partly in some; not held in none."""
    statement = "DictPFL keeps the accuracy of plaintext federated fine-tuning"
    paper = "accuracy comparable to plaintext FL"
    gaps = {
        name: _by_method(rows)[PLAIN]["final acc"] - _by_method(rows)[DICT]["final acc"]
        for name, rows in cases.items()
        if DICT in _by_method(rows) and PLAIN in _by_method(rows)
    }
    if not gaps:
        return _missing(statement, paper, [DICT, PLAIN])
    kept = sum(g <= ACCURACY_TOLERANCE for g in gaps.values())
    verdict = "held" if kept == len(gaps) else ("not held" if kept == 0 else "partly")
    return Claim(
        statement,
        paper=paper,
        measured="; ".join(
            f"{name}: {100 * g:.1f} points below plaintext" for name, g in gaps.items()
        ),
        verdict=verdict,
        why=f"rule: within {100 * ACCURACY_TOLERANCE:g} points of plaintext FedAvg's final "
        "accuracy in every case",
    )


def ablation_claim(cases: Mapping[str, Rows]) -> Claim:
    """Held when, in the first case, each component alone sends fewer bytes than FedHE-Full and
    DictPFL (both) fewer than either alone; not held otherwise."""
    statement = "DePE and PrME each reduce communication, and together they reduce it most"
    paper = "ablations: both components contribute"
    first_name, first = next(iter(cases.items()))
    rows = _by_method(first)
    needed = [DICT, DEPE, PRME, FULL]
    if not all(m in rows for m in needed):
        return _missing(statement, paper, needed)
    b = {m: rows[m]["bytes/round"] for m in needed}
    ok = b[DICT] < b[DEPE] < b[FULL] and b[DICT] < b[PRME] < b[FULL]
    return Claim(
        statement,
        paper=paper,
        measured=", ".join(f"{m} {v:,.0f}" for m, v in b.items())
        + f" bytes per round ({first_name})",
        verdict="held" if ok else "not held",
        why="rule: bytes(DictPFL) < bytes(DePE only), bytes(PrME only) < bytes(FedHE-Full)",
    )
