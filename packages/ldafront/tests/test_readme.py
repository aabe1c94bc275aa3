from pathlib import Path

from paperkit.testing import run_readme_example

README = Path(__file__).resolve().parent.parent / "README.md"


def test_usage_example_runs():
    namespace = run_readme_example(README)  # the example asserts its own claims
    assert namespace["f"].shape == (50_000,) and len(namespace["aud"].small_) == 7
    assert namespace["verdict"]["delta_star"] < namespace["law"].D0_
