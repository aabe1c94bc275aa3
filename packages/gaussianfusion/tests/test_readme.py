from pathlib import Path

from paperkit.testing import run_readme_example

README = Path(__file__).resolve().parent.parent / "README.md"


def test_usage_example_runs():
    namespace = run_readme_example(README)  # the example asserts its own claims
    assert namespace["out"]["traj"].shape == (4, 8, 2)
