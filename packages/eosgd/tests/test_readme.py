from pathlib import Path

import numpy as np

from paperkit.testing import run_readme_example

README = Path(__file__).resolve().parent.parent / "README.md"


def test_usage_example_runs():
    namespace = run_readme_example(README)  # the example asserts its own claims
    assert namespace["run"].r.shape == (20_001, 3)
    assert np.isclose(namespace["S_inf"][1], 2.0, atol=1e-3)  # critical: S(pi(w)) -> S*
