from pathlib import Path

import numpy as np

from paperkit.testing import run_readme_example

README = Path(__file__).resolve().parent.parent / "README.md"


def test_usage_example_runs():
    namespace = run_readme_example(README)  # the example asserts its own claims
    assert namespace["sq"].shape == (1000, 4)
    assert np.all(namespace["sq"] <= namespace["qm"] + 1e-9)
