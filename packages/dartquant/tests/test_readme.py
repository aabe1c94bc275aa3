from pathlib import Path

from paperkit.testing import run_readme_example

README = Path(__file__).resolve().parent.parent / "README.md"


def test_usage_example_runs():
    namespace = run_readme_example(README)  # the example asserts its own claims
    assert namespace["R"].shape == (64, 64)
    assert namespace["result"].R1.shape == (32, 32)
    assert namespace["history"]["final_loss"] < namespace["history"]["initial_loss"]
