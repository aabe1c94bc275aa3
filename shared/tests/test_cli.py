import json
import sys
from pathlib import Path

import pytest

from paperkit.cli import catalog_markdown, package_main, papers_main
from paperkit.registry import discover
from paperkit.testing import check_results_file


def test_list_shows_every_package(installed, capsys):
    assert papers_main(["list"]) == 0
    out = capsys.readouterr().out
    assert "toy" in out and "A Toy Paper" in out and "2501.00001" in out and "in progress" in out
    assert "nobench" in out and "no run" in out


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


def test_reproduce_writes_results_that_follow_the_schema(installed, tmp_path):
    out = tmp_path / "run"
    assert papers_main(["reproduce", "toy", "--quick", "--seed", "3", "--out", str(out)]) == 0
    doc = check_results_file(out / "results.json")
    assert doc["schema"] == "paperkit.results/1" and doc["package"] == "toy"
    assert doc["seed"] == 3 and doc["quick"] is True and doc["complete"] is True
    assert doc["settings"] == {"steps": 3}
    assert doc["claims"][0]["verdict"] == "held" and doc["figures"] == ["toy.png"]
    assert doc["environment"]["python"] and doc["environment"]["device"] == "cpu"
    assert doc["wall_s"] >= 0
    assert (out / "toy.png").is_file()
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]  # written atomically
    # the run is seeded before the reproduction starts: same seed, same draw
    assert papers_main(["reproduce", "toy", "--seed", "3", "--out", str(tmp_path / "again")]) == 0
    again = json.loads((tmp_path / "again" / "results.json").read_text())
    assert again["data"]["draw"] == doc["data"]["draw"]


def test_reproduce_default_folder(installed, tmp_path):
    assert papers_main(["reproduce", "toy"]) == 0
    (folder,) = (tmp_path / "runs" / "toy").iterdir()
    assert (folder / "results.json").is_file()


def test_list_and_report_show_the_latest_verdict(installed, tmp_path, capsys):
    assert papers_main(["reproduce", "toy", "--quick"]) == 0
    capsys.readouterr()
    assert papers_main(["list"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if "A Toy Paper" in line)
    assert "held" in row
    assert papers_main(["report", "--markdown"]) == 0
    table = capsys.readouterr().out
    assert (
        "| toy | in progress |" in table and "a draw is below 2 | held | 1 | 0 | 0 | 1 |" in table
    )
    assert "| nobench | done | — |" in table and "no run" in table


def test_a_reproduction_must_return_a_report(installed, tmp_path):
    with pytest.raises(TypeError, match="must return a paperkit.Report"):
        papers_main(["reproduce", "badreturn", "--out", str(tmp_path / "x")])


def test_interrupt_is_one_line_and_marks_the_folder(installed, tmp_path, capsys):
    out = tmp_path / "int"
    assert papers_main(["reproduce", "interrupted", "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert "Interrupted" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert (out / "INCOMPLETE").is_file() and not (out / "results.json").exists()
    assert papers_main(["report", "--markdown"]) == 0
    assert "| interrupted | done | — |" in capsys.readouterr().out


def test_interrupt_before_any_output_leaves_no_folder(installed, tmp_path, monkeypatch):
    import toy_paper

    def stop(*, quick, seed, out):
        raise KeyboardInterrupt

    monkeypatch.setattr(toy_paper, "interrupted", stop)
    assert papers_main(["reproduce", "interrupted"]) == 130
    assert not any((tmp_path / "runs" / "interrupted").iterdir())


def test_unwritable_out_is_one_line(installed, tmp_path, capsys, monkeypatch):
    from paperkit import cli

    locked = tmp_path / "locked"
    locked.mkdir()
    # as root every folder is writable: stand in for a read-only one
    monkeypatch.setattr(cli.os, "access", lambda path, mode: Path(path) != locked)
    assert papers_main(["reproduce", "toy", "--out", str(locked / "run")]) == 2
    err = capsys.readouterr().err
    assert "is not writable" in err and len(err.strip().splitlines()) == 1
    assert not (locked / "run").exists()


def test_out_under_a_file_is_one_line(installed, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert papers_main(["reproduce", "toy", "--out", str(blocker / "run")]) == 2
    err = capsys.readouterr().err
    assert "is not a folder" in err and "Traceback" not in err


def test_bench_writes_measurements_in_bytes(installed, tmp_path):
    assert papers_main(["bench", "toy", "--device", "cpu", "--out", str(tmp_path / "b")]) == 0
    doc = check_results_file(tmp_path / "b" / "bench.json")
    assert doc["schema"] == "paperkit.bench/1" and doc["device"] == "cpu"
    assert [m["peak_bytes"] for m in doc["measurements"]] == [64, 128]
    assert papers_main(["bench", "nobench"]) == 2


def test_overrides_reach_the_package_function(installed, tmp_path):
    from paperkit.cli import run_bench

    path = run_bench(discover()["toy"], device="cpu", out=tmp_path / "o", overrides={"sizes": (4,)})
    assert [m["size"] for m in check_results_file(path)["measurements"]] == [4]


def test_bench_refuses_cuda_for_a_package_without_gpu_code(installed, tmp_path, capsys):
    assert papers_main(["bench", "toy", "--device", "cuda", "--out", str(tmp_path / "c")]) == 2
    assert "no GPU code" in capsys.readouterr().err
    assert papers_main(["bench", "toy", "--device", "gpu0", "--out", str(tmp_path / "d")]) == 2
    assert not (tmp_path / "c").exists()


def test_unknown_name_fails_with_the_known_list(installed, capsys):
    assert papers_main(["reproduce", "nope"]) == 2
    assert papers_main(["bench", "nope"]) == 2
    err = capsys.readouterr().err
    assert "Unknown paper package 'nope'" in err and "nobench, toy, withdata" in err


def test_negative_seed_is_refused(installed, capsys):
    assert papers_main(["reproduce", "toy", "--seed", "-1"]) == 2


def test_package_command(installed, tmp_path):
    paper = discover()["toy"]
    assert package_main(paper, ["reproduce", "--quick", "--out", str(tmp_path / "p")]) == 0
    assert (tmp_path / "p" / "results.json").is_file()
    assert package_main(paper, ["bench", "--quick", "--out", str(tmp_path / "q")]) == 0
    assert json.loads((tmp_path / "q" / "bench.json").read_text())["quick"] is True


def test_data_root_reaches_only_reproductions_that_read_data(installed, tmp_path, capsys):
    data = tmp_path / "datasets"
    data.mkdir()
    out = tmp_path / "d"
    assert papers_main(["reproduce", "withdata", "--data-root", str(data), "--out", str(out)]) == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["settings"]["data_root"] == str(data)
    assert papers_main(["reproduce", "withdata", "--out", str(tmp_path / "e")]) == 0
    assert json.loads((tmp_path / "e" / "results.json").read_text())["settings"] == {
        "data_root": None
    }
    assert papers_main(["reproduce", "toy", "--data-root", str(data)]) == 2
    assert "reads no data folder" in capsys.readouterr().err


def test_papers_list_imports_nothing_heavy():
    import subprocess

    heavy = ("torch", "scipy", "matplotlib")
    code = f"import sys, paperkit.cli; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
