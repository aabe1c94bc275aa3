import json

from paperkit.cli import catalog_markdown, package_main, papers_main
from paperkit.registry import discover


def test_list_shows_every_package(installed, capsys):
    assert papers_main(["list"]) == 0
    out = capsys.readouterr().out
    assert "toy" in out and "A Toy Paper" in out and "2501.00001" in out and "in progress" in out
    assert "nobench" in out


def test_list_markdown_is_the_catalog(installed, capsys):
    assert papers_main(["list", "--markdown"]) == 0
    assert capsys.readouterr().out.strip() == catalog_markdown(discover())
    assert (
        "| [`toy`](packages/toy) | A Toy Paper | [2501.00001](https://arxiv.org/abs/2501.00001)"
        in (catalog_markdown(discover()))
    )
    assert catalog_markdown({}) == "_No paper packages yet._"
    from paperkit.registry import Paper

    unlisted = Paper("nox_id", "No Id", None, "done", "m:f", link="https://example.org/p")
    assert "| [paper](https://example.org/p) | done |" in catalog_markdown({"nox_id": unlisted})


def test_list_with_nothing_installed(monkeypatch, capsys):
    from paperkit import registry

    monkeypatch.setattr(registry, "_entry_points", list)
    assert papers_main(["list"]) == 0
    assert "No paper packages are installed" in capsys.readouterr().out


def test_reproduce_writes_results_and_plot(installed, tmp_path):
    out = tmp_path / "run"
    assert papers_main(["reproduce", "toy", "--quick", "--seed", "3", "--out", str(out)]) == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["package"] == "toy" and doc["options"] == {"quick": True, "seed": 3}
    assert doc["results"]["seed"] == 3 and doc["results"]["quick"] is True
    assert (out / "toy.png").is_file()
    # the run is seeded before the reproduction starts: same seed, same draw
    assert papers_main(["reproduce", "toy", "--seed", "3", "--out", str(tmp_path / "again")]) == 0
    again = json.loads((tmp_path / "again" / "results.json").read_text())
    assert again["results"]["draw"] == doc["results"]["draw"]


def test_reproduce_default_folder(installed, tmp_path):
    assert papers_main(["reproduce", "toy"]) == 0
    (folder,) = (tmp_path / "runs" / "toy").iterdir()
    assert (folder / "results.json").is_file()


def test_bench(installed, tmp_path):
    assert papers_main(["bench", "toy", "--device", "cpu", "--out", str(tmp_path / "b")]) == 0
    doc = json.loads((tmp_path / "b" / "bench.json").read_text())
    assert doc["results"] == {"device": "cpu", "quick": False}
    assert papers_main(["bench", "nobench"]) == 2


def test_unknown_name_fails_with_the_known_list(installed, capsys):
    assert papers_main(["reproduce", "nope"]) == 2
    assert papers_main(["bench", "nope"]) == 2
    err = capsys.readouterr().err
    assert "Unknown paper package 'nope'" in err and "nobench, toy" in err


def test_negative_seed_is_refused(installed, capsys):
    assert papers_main(["reproduce", "toy", "--seed", "-1"]) == 2


def test_package_command(installed, tmp_path):
    paper = discover()["toy"]
    assert package_main(paper, ["reproduce", "--quick", "--out", str(tmp_path / "p")]) == 0
    assert (tmp_path / "p" / "results.json").is_file()
    assert package_main(paper, ["bench", "--quick", "--out", str(tmp_path / "q")]) == 0
    assert json.loads((tmp_path / "q" / "bench.json").read_text())["results"]["quick"] is True


def test_data_root_reaches_only_reproductions_that_read_data(installed, tmp_path, capsys):
    data = tmp_path / "datasets"
    data.mkdir()
    out = tmp_path / "d"
    assert papers_main(["reproduce", "withdata", "--data-root", str(data), "--out", str(out)]) == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["results"] == {"data_root": "datasets"}
    assert doc["options"]["data_root"] == str(data)
    assert papers_main(["reproduce", "withdata", "--out", str(tmp_path / "e")]) == 0
    assert json.loads((tmp_path / "e" / "results.json").read_text())["results"] == {
        "data_root": None
    }
    assert papers_main(["reproduce", "toy", "--data-root", str(data)]) == 2
    assert "reads no data folder" in capsys.readouterr().out
