from pathlib import Path

import numpy as np

from paperkit.testing import run_readme_example

README = Path(__file__).resolve().parent.parent / "README.md"


def test_usage_example_runs():
    namespace = run_readme_example(README)  # the example asserts its own claims
    assert len(namespace["meta"]) == 5 and np.mean(namespace["meta"]) <= 1.0
