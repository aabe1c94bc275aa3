import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_usage_example_runs():
    text = README.read_text()
    usage = text.split("## Usage", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", usage, re.DOTALL)
    namespace: dict = {}
    exec(compile(code, str(README), "exec"), namespace)  # the example asserts its own claims
    assert namespace["sets5"].shape == (2000, 10) and namespace["P"].shape == (3, 10)
    assert len(namespace["ragged_sets"]) == 3
