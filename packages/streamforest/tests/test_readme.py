from pathlib import Path

from paperkit.testing import run_readme_example

README = Path(__file__).resolve().parent.parent / "README.md"


def test_usage_example_runs():
    namespace = run_readme_example(README)  # the example asserts its own claims
    assert namespace["tokens"].shape[1] == 32 and 0 <= namespace["res"]["past_acc"] <= 1
