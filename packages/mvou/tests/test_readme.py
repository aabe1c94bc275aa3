from pathlib import Path

import pytest

from paperkit.testing import run_readme_example

README = Path(__file__).resolve().parent.parent / "README.md"


@pytest.mark.slow  # a 300-step training and POT's import
def test_usage_example_runs():
    namespace = run_readme_example(README)  # the example asserts its own claims
    assert namespace["paths"].shape == (500, 3, 2)
