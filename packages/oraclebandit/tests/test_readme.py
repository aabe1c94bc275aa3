from pathlib import Path

from paperkit.testing import run_readme_example

README = Path(__file__).resolve().parent.parent / "README.md"


def test_usage_example_runs():
    namespace = run_readme_example(README)  # the example asserts its own claims
    results = namespace["results"]
    assert set(results) == {"CUCB", "AROQ", "SROQ"}
    assert all(r["regret"].shape == (2**13,) for r in results.values())
