"""Results as data: the claims a reproduction tests, what a run returns, and one file schema.

A reproduction returns a :class:`Report`; its claims say, one by one, whether the paper's claim
held here::

    return Report(
        claims=[Claim("ZeroS beats softmax attention on the contrast task", paper="MSE 0.01 vs 0.4",
                      measured=f"MSE {ours:.3g} vs {softmax:.3g}", verdict="held",
                      why="3 seeds, 400 steps; every seed agrees")],
        tables={"contrast": rows},
        figures=[out / "contrast.png"],
        settings={"steps": 400, "seeds": [0, 1, 2]},
    )

A benchmark returns a :class:`Report` with ``measurements`` (:class:`paperkit.Measurement` rows).
The ``papers`` command writes either into ``results.json`` / ``bench.json`` following the schemas
``paperkit/schemas/results.schema.json`` and ``bench.schema.json`` (JSON Schema, draft 2020-12),
with the package, its version, the git commit, the seed, the settings, the wall time and the
environment around it.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import platform
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata, resources
from pathlib import Path
from typing import Any

from paperkit.checks import check_choice
from paperkit.errors import param_error

__all__ = [
    "SCHEMA_VERSION",
    "VERDICTS",
    "Claim",
    "Report",
    "environment",
    "git_commit",
    "load_schema",
    "validate",
]

#: The verdicts a claim can get here.
VERDICTS = ("held", "partly", "not held", "not testable here")
#: Version of the results.json / bench.json schemas (``"paperkit.results/1"``, ...).
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Claim:
    """One claim of the paper, and what this package measured of it.

    Attributes:
        statement: the claim in one sentence, as the paper makes it.
        paper: the paper's value or wording (with its table or figure, e.g. ``"Table 2: 81.3"``).
        measured: what the run measured here (a number or a short phrase with numbers).
        verdict: one of :data:`VERDICTS`.
        why: the reason for the verdict: scale, seeds, spread, what could not be run here.
    """

    statement: str
    paper: Any
    measured: Any
    verdict: str
    why: str = ""

    def __post_init__(self) -> None:
        check_choice("verdict", "Claim", self.verdict, VERDICTS)
        if not isinstance(self.statement, str) or not self.statement.strip():
            raise param_error("statement", "Claim", "a non-empty string", self.statement)

    def to_dict(self) -> dict[str, Any]:
        return {
            "statement": self.statement,
            "paper": self.paper,
            "measured": self.measured,
            "verdict": self.verdict,
            "why": self.why,
        }


@dataclass
class Report:
    """What ``reproduce`` and ``bench`` return.

    Attributes:
        claims: the claims tested, the headline first.
        tables: named tables, each a list of rows (dicts sharing keys), as printed.
        figures: paths of the figures written (PNG), inside the run folder.
        settings: every setting the run used (sizes, steps, seeds, learning rates, ...).
        measurements: benchmark rows (:class:`paperkit.Measurement`), for ``bench``.
        data: anything else worth keeping (curves, per-seed values), JSON-able.
    """

    claims: Sequence[Claim] = ()
    tables: Mapping[str, Sequence[Mapping[str, Any]]] = field(default_factory=dict)
    figures: Sequence[str | os.PathLike] = ()
    settings: Mapping[str, Any] = field(default_factory=dict)
    measurements: Sequence[Any] = ()
    data: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for i, claim in enumerate(self.claims):
            if not isinstance(claim, Claim):
                raise param_error(
                    f"claims[{i}]", "Report", "a paperkit.Claim", type(claim).__name__
                )
        if not isinstance(self.tables, Mapping):
            raise param_error("tables", "Report", "a mapping of name to rows", type(self.tables))

    @property
    def headline(self) -> Claim | None:
        """The first claim: the paper's headline, or None when the run tests no claim."""
        return self.claims[0] if self.claims else None

    def to_dict(self, folder: Path | None = None) -> dict[str, Any]:
        """The report's part of results.json; figure paths relative to ``folder`` when given."""

        def rel(p: str | os.PathLike) -> str:
            p = Path(p)
            if folder is not None:
                with contextlib.suppress(ValueError):
                    return str(p.resolve().relative_to(folder.resolve()))
            return str(p)

        return {
            "claims": [c.to_dict() for c in self.claims],
            "tables": {k: list(v) for k, v in self.tables.items()},
            "figures": [rel(p) for p in self.figures],
            "settings": dict(self.settings),
            "measurements": [
                m.to_dict() if hasattr(m, "to_dict") else m for m in self.measurements
            ],
            "data": dict(self.data),
        }


def git_commit(path: str | os.PathLike | None = None) -> str | None:
    """The commit of the git checkout holding ``path`` (default: this file), or None."""
    where = Path(path) if path is not None else Path(__file__).parent
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=where if where.is_dir() else where.parent,
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else None


def environment(device: str = "cpu") -> dict[str, Any]:
    """Python, numpy and torch versions, the device and the thread count of this process."""
    env: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "device": device,
        "threads": os.cpu_count(),
    }
    for dist in ("numpy", "torch"):
        try:
            env[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            env[dist] = None
    import sys

    if "torch" in sys.modules:  # the threads torch computes with, when this run used torch
        env["threads"] = sys.modules["torch"].get_num_threads()
        if device.startswith("cuda") and sys.modules["torch"].cuda.is_available():
            env["device_name"] = sys.modules["torch"].cuda.get_device_name()
    return env


def now() -> str:
    return _dt.datetime.now().astimezone().isoformat(timespec="seconds")


def load_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of ``results.json`` (``kind="results"``) or ``bench.json`` (``"bench"``)."""
    check_choice("kind", "load_schema", kind, ("results", "bench"))
    text = resources.files("paperkit").joinpath(f"schemas/{kind}.schema.json").read_text()
    return json.loads(text)


def validate(data: Mapping[str, Any], kind: str | None = None) -> None:
    """Raise ``jsonschema.ValidationError`` when ``data`` does not follow its schema.

    ``kind`` defaults to the one the data names in its ``schema`` field. Needs ``jsonschema``
    (the ``testing`` extra).
    """
    import jsonschema

    if kind is None:
        kind = str(data.get("schema", "")).removeprefix("paperkit.").split("/")[0]
    jsonschema.validate(dict(data), load_schema(kind))
