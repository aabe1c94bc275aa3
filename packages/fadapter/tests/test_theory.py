from fadapter import adapter_width_probe, lora_depth_probe
from fadapter.theory import log_linear_fit


def test_log_linear_fit_recovers_a_geometric_sequence():
    fit = log_linear_fit([1, 2, 3, 4], [0.3 * 0.6**d for d in (1, 2, 3, 4)])
    assert abs(fit["ratio"] - 0.6) < 1e-12 and abs(fit["r2"] - 1) < 1e-12


def test_adapter_probe_error_falls_with_width_and_tracks_best_rank_d():
    rows = adapter_width_probe(widths=(1, 4), steps=60)
    assert rows[1]["rel_error"] < 0.7 * rows[0]["rel_error"]
    # best rank-d map of sigma_j = 0.6^j leaves 0.6^d (closed form of the probe's target)
    assert abs(rows[0]["best_linear"] - 0.6) < 1e-5 and abs(rows[1]["best_linear"] - 0.6**4) < 1e-5
    assert rows[0]["rel_error"] > 0.9 * rows[0]["best_linear"]


def test_lora_probe_starts_from_the_untrained_shift():
    rows = lora_depth_probe(depths=(1,), steps=1, width=4, rank=1)
    assert 0.5 < rows[0]["shift_left"] <= 1.01 and rows[0]["rel_error"] > 0
