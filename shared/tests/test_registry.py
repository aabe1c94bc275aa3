from importlib.metadata import EntryPoint

import pytest

from paperkit import registry
from paperkit.registry import Paper, UnknownPaperError, discover, get_paper

GOOD = dict(name="zeros", title="T", arxiv="2602.05230", status="done", reproduce="zeros.r:run")


def test_paper_fields_and_url():
    paper = Paper(**GOOD, bench="zeros.bench:run", gpu=True)
    assert paper.url == "https://arxiv.org/abs/2602.05230"
    unlisted = Paper(**{**GOOD, "arxiv": None}, link="https://example.org/paper")
    assert unlisted.url == "https://example.org/paper"
    assert Paper(**{**GOOD, "arxiv": None}).url is None


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("name", "Zeros"),
        ("name", "my-pkg"),
        ("arxiv", "arXiv:2602.05230"),
        ("status", "finished"),
        ("reproduce", "zeros.reproduce"),
        ("bench", "not a target"),
        ("link", "example.org"),
    ],
)
def test_paper_rejects_bad_fields(field, value):
    with pytest.raises(ValueError, match=f"The '{field}' parameter of Paper"):
        Paper(**{**GOOD, field: value})


def test_discover_and_get(installed):
    papers = discover()
    assert list(papers) == ["badreturn", "interrupted", "nobench", "toy", "withdata"]
    assert get_paper("toy", papers).title == "A Toy Paper"
    assert papers["toy"].load_bench()(quick=True, device="cpu", out=None).settings["quick"] is True
    with pytest.raises(ValueError, match="registers no benchmark"):
        papers["nobench"].load_bench()


def test_unknown_names_list_the_known_ones(installed):
    with pytest.raises(
        UnknownPaperError,
        match="Unknown paper package 'nope'. Known packages: badreturn, interrupted, nobench, toy, "
        "withdata.",
    ):
        get_paper("nope")
    with pytest.raises(UnknownPaperError, match="none are installed"):
        get_paper("nope", {})


def test_broken_registrations_warn_and_are_skipped(installed, monkeypatch):
    eps = [
        *installed.values(),
        EntryPoint("broken", "no_such_module_x:PAPER", registry.ENTRY_POINT_GROUP),
        EntryPoint("text", "toy_paper:NOT_A_PAPER", registry.ENTRY_POINT_GROUP),
        EntryPoint("renamed", "toy_paper:PAPER", registry.ENTRY_POINT_GROUP),
    ]
    monkeypatch.setattr(registry, "_entry_points", lambda: eps)
    with pytest.warns(UserWarning) as record:
        papers = discover()
    assert list(papers) == ["badreturn", "interrupted", "nobench", "toy", "withdata"]
    messages = " ".join(str(w.message) for w in record)
    assert "'broken'" in messages and "'text'" in messages and "'renamed'" in messages
