import sys
import textwrap
from importlib.metadata import EntryPoint

import pytest

from paperkit import registry

TOY = """
from paperkit import Paper, figure, save_figure

PAPER = Paper(
    name="toy",
    title="A Toy Paper",
    arxiv="2501.00001",
    status="in progress",
    reproduce="toy_paper:reproduce",
    bench="toy_paper:bench",
)
NO_BENCH = Paper(name="nobench", title="No Bench", arxiv="2501.00002", status="done",
                 reproduce="toy_paper:reproduce")
WITH_DATA = Paper(name="withdata", title="With Data", arxiv="2501.00003", status="done",
                  reproduce="toy_paper:reproduce_data")
NOT_A_PAPER = "just a string"


def reproduce(*, quick, seed, out):
    import numpy as np
    fig, ax = figure()
    ax.plot([0, 1], [1, 0])
    save_figure(fig, out / "toy.png")
    return {"quick": quick, "seed": seed, "draw": float(np.random.rand())}


def reproduce_data(*, quick, seed, out, data_root=None):
    return {"data_root": None if data_root is None else data_root.name}


def bench(*, quick, device, out):
    return {"device": device, "quick": quick}
"""


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """Register entry points for the toy module, as if packages were installed."""
    (tmp_path / "toy_paper.py").write_text(textwrap.dedent(TOY))
    monkeypatch.syspath_prepend(str(tmp_path))
    eps = {
        "toy": EntryPoint("toy", "toy_paper:PAPER", registry.ENTRY_POINT_GROUP),
        "nobench": EntryPoint("nobench", "toy_paper:NO_BENCH", registry.ENTRY_POINT_GROUP),
        "withdata": EntryPoint("withdata", "toy_paper:WITH_DATA", registry.ENTRY_POINT_GROUP),
    }
    monkeypatch.setattr(registry, "_entry_points", lambda: list(eps.values()))
    monkeypatch.chdir(tmp_path)
    yield eps
    sys.modules.pop("toy_paper", None)
