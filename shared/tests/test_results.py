import json

import jsonschema
import pytest

from paperkit import Claim, Measurement, Report
from paperkit.results import VERDICTS, environment, load_schema, validate


def test_claim_verdicts_are_the_four():
    assert VERDICTS == ("held", "partly", "not held", "not testable here")
    claim = Claim("x beats y", paper="Table 2: 3.1", measured=2.9, verdict="partly", why="1 seed")
    assert claim.to_dict()["verdict"] == "partly"
    with pytest.raises(ValueError, match="'verdict' parameter of Claim"):
        Claim("x beats y", paper=1, measured=1, verdict="yes")
    with pytest.raises(ValueError, match="'statement' parameter of Claim"):
        Claim(" ", paper=1, measured=1, verdict="held")


def test_report_headline_and_dict(tmp_path):
    first = Claim("a", paper=1, measured=1, verdict="held")
    report = Report(
        claims=[first, Claim("b", paper=1, measured=0, verdict="not held")],
        tables={"t": [{"x": 1}]},
        figures=[tmp_path / "f.png"],
        measurements=[Measurement("m", 4, 0.1, 0.01, 32, "cpu")],
    )
    assert report.headline is first and Report().headline is None
    body = report.to_dict(tmp_path)
    assert body["figures"] == ["f.png"] and body["measurements"][0]["peak_bytes"] == 32
    with pytest.raises(ValueError, match="'claims\\[0\\]' parameter of Report"):
        Report(claims=[{"statement": "a"}])


def test_schemas_are_valid_json_schema():
    for kind in ("results", "bench"):
        schema = load_schema(kind)
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["$id"] == f"paperkit.{kind}/1"


def _doc():
    return {
        "schema": "paperkit.results/1",
        "kind": "reproduce",
        "package": "toy",
        "version": "0.1.0",
        "paper": {"title": "T", "arxiv": None},
        "commit": None,
        "created": "2026-01-01T00:00:00+00:00",
        "seed": 0,
        "quick": True,
        "settings": {},
        "claims": [{"statement": "s", "paper": 1, "measured": 1, "verdict": "held", "why": ""}],
        "tables": {},
        "figures": [],
        "data": {},
        "wall_s": 1.0,
        "environment": environment(),
        "complete": True,
    }


def test_validate_catches_what_a_reader_relies_on():
    validate(json.loads(json.dumps(_doc())))
    for key, value in [("claims", [{"statement": "s"}]), ("seed", -1), ("wall_s", "1 s")]:
        with pytest.raises(jsonschema.ValidationError):
            validate({**_doc(), key: value})
    bad_verdict = _doc()
    bad_verdict["claims"][0]["verdict"] = "mostly"
    with pytest.raises(jsonschema.ValidationError):
        validate(bad_verdict)


def test_environment_names_versions_and_threads():
    env = environment("cpu")
    assert env["python"].count(".") == 2 and env["numpy"] and env["threads"] >= 1
