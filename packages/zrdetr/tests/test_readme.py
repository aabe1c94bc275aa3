from pathlib import Path

from paperkit.testing import run_readme_example

README = Path(__file__).resolve().parent.parent / "README.md"


def test_usage_example_runs():
    namespace = run_readme_example(README)  # the example asserts its own claims
    assert namespace["out"]["boxes"].shape == (4, 10, 4)
    assert namespace["loss"].item() > 0
