import sys
import textwrap
from importlib.metadata import EntryPoint

import pytest

from paperkit import registry

TOY = """
from paperkit import Claim, Measurement, Paper, Report, figure, save_figure

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
BAD_RETURN = Paper(name="badreturn", title="Bad Return", arxiv=None, status="done",
                   reproduce="toy_paper:not_a_report")
INTERRUPTED = Paper(name="interrupted", title="Interrupted", arxiv=None, status="done",
                    reproduce="toy_paper:interrupted")


def reproduce(*, quick, seed, out):
    import numpy as np
    fig, ax = figure()
    ax.plot([0, 1], [1, 0])
    draw = float(np.random.rand())
    return Report(
        claims=[Claim("a draw is below 2", paper="< 2", measured=draw, verdict="held")],
        tables={"draws": [{"seed": seed, "draw": draw}]},
        figures=[save_figure(fig, out / "toy.png")],
        settings={"steps": 3 if quick else 30},
        data={"draw": draw},
    )


def reproduce_data(*, quick, seed, out, data_root=None):
    return Report(settings={"data_root": None if data_root is None else data_root.name})


def bench(*, quick, device, out, sizes=(8, 16)):
    rows = [Measurement("toy", n, 1e-3 * n, 1e-5, 8 * n, device) for n in sizes]
    return Report(measurements=rows, settings={"quick": quick})


def not_a_report(*, quick, seed, out):
    return {"quick": quick}


def interrupted(*, quick, seed, out):
    (out / "partial.txt").write_text("half")
    raise KeyboardInterrupt
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
        "badreturn": EntryPoint("badreturn", "toy_paper:BAD_RETURN", registry.ENTRY_POINT_GROUP),
        "interrupted": EntryPoint(
            "interrupted", "toy_paper:INTERRUPTED", registry.ENTRY_POINT_GROUP
        ),
    }
    monkeypatch.setattr(registry, "_entry_points", lambda: list(eps.values()))
    monkeypatch.chdir(tmp_path)
    yield eps
    sys.modules.pop("toy_paper", None)
