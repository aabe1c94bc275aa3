"""The verdict rules of dictpfl.claims, on the README's tables and on counter-examples."""

from dictpfl.claims import (
    ablation_claim,
    accuracy_claim,
    fedhe_claim,
    fedml_claim,
    plaintext_time_claim,
)

KEYS = (
    "final acc",
    "bytes/round",
    "s/round",
    "x comm vs FedHE-Full",
    "x time vs FedHE-Full",
    "x time vs plaintext",
    "plaintext-exposed %",
)


def rows(table):
    return [{"method": m, **dict(zip(KEYS, v, strict=True))} for m, v in table.items()]


# the README's case A and case B tables, full run (MB/round there = bytes/round / 10^6)
CASE_A = rows(
    {
        "Plaintext FedAvg": (0.967, 2.72e6, 0.234, 17.5, 17.5, 1, 100),
        "FedHE-Full": (0.967, 47.6e6, 4.10, 1, 1, 17.5, 0),
        "FedML-HE (10%)": (0.967, 9.25e6, 0.795, 5.15, 5.17, 3.39, 90),
        "DictPFL": (0.953, 2.38e6, 0.216, 20.0, 19.0, 0.92, 0),
        "DePE only": (0.958, 4.53e6, 0.400, 10.5, 10.3, 1.71, 0),
        "PrME only": (0.967, 23.9e6, 2.07, 1.99, 1.99, 8.83, 0),
    }
)
CASE_B = rows(
    {
        "Plaintext FedAvg": (0.950, 0.837e6, 0.077, 19.0, 17.8, 1, 100),
        "FedHE-Full": (0.950, 15.9e6, 1.37, 1, 1, 17.8, 0),
        "FedML-HE (10%)": (0.950, 3.02e6, 0.265, 5.25, 5.17, 3.43, 90),
        "DictPFL": (0.900, 2.27e6, 0.205, 7.0, 6.71, 2.65, 0),
    }
)
FULL = {"A": CASE_A, "B": CASE_B}


def test_verdicts_of_the_full_run():
    assert plaintext_time_claim(FULL).verdict == "held"  # 0.92x plaintext in case A
    fedhe = fedhe_claim(FULL, {"A": 85_002, "B": 26_122}, slots=4096)
    assert fedhe.verdict == "not testable here" and "= 21 ciphertexts" in fedhe.why
    assert fedml_claim(FULL).verdict == "partly"  # 3.9x fewer bytes, 3.7x faster
    assert accuracy_claim(FULL).verdict == "partly"  # 1.4 points in A, 5 in B
    assert ablation_claim(FULL).verdict == "held"


def test_verdicts_of_the_quick_run():
    quick = rows(
        {
            "Plaintext FedAvg": (0.961, 2.72e6, 0.235, 17.5, 17.6, 1, 100),
            "DictPFL": (0.942, 2.55e6, 0.231, 18.7, 17.8, 0.99, 0),
        }
    )
    assert accuracy_claim({"A": quick}).verdict == "held"  # 1.9 points
    assert fedml_claim({"A": quick}).verdict == "not testable here"


def edit(table, method, **changes):
    return [
        {**r, **{k.replace("_", " "): v for k, v in changes.items()}}
        if r["method"] == method
        else r
        for r in table
    ]


def test_rules_can_fail():
    slow = edit(CASE_A, "DictPFL", **{"x time vs plaintext": 2.5})
    assert plaintext_time_claim({"A": slow}).verdict == "not held"
    exposed = edit(CASE_A, "DictPFL", **{"plaintext-exposed %": 10})
    assert plaintext_time_claim({"A": exposed}).verdict == "not held"
    big = {"A": 2_000_000}  # a model whose ciphertext ratio could reach 402x
    assert fedhe_claim({"A": CASE_A}, big, slots=4096).verdict == "not held"
    huge_gain = edit(CASE_A, "DictPFL", **{"x comm vs FedHE-Full": 500, "x time vs FedHE-Full": 40})
    assert fedhe_claim({"A": huge_gain}, big, slots=4096).verdict == "held"
    costly = edit(CASE_A, "DictPFL", **{"bytes/round": 30e6})
    assert fedml_claim({"A": costly}).verdict == "not held"
    assert ablation_claim({"A": costly}).verdict == "not held"
    worse = edit(CASE_A, "DictPFL", **{"final acc": 0.9})
    assert accuracy_claim({"A": worse}).verdict == "not held"
