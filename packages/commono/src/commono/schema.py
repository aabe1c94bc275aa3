"""One Common-O example, its checks, and JSONL storage with PNG images.

An example (Sec. 3 of the paper) is two images of scenes, a list of candidate objects that
includes the literal option :data:`NONE_OPTION`, and the ground truth G: the candidates present
in both scenes (G empty means the right answer is exactly {NONE_OPTION}).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from paperkit import check_bool, check_int, describe, param_error

__all__ = ["NONE_OPTION", "SOURCES", "SPLITS", "Example", "load_jsonl", "save_jsonl", "validate"]

#: The option that says the two scenes share no listed object (the paper's wording).
NONE_OPTION = "No objects are in common"
SPLITS = ("common-o", "complex")
SOURCES = ("real", "synthetic")
#: Most candidates an example may list: one letter each, A-Z.
MAX_OPTIONS = 26
_MAX_SIDE = 4096


@dataclass
class Example:
    """A two-image example of Common-O Bench.

    Attributes:
        id: a unique identifier.
        images: the two scenes, each an ``(H, W, 3)`` uint8 array or a path to an image file.
        candidates: the options in the order they are lettered (A, B, ...), all distinct, with
            :data:`NONE_OPTION` exactly once; at most 26.
        gt_common: G, the candidates present in both scenes (order free; NONE_OPTION excluded).
        split: ``"common-o"`` (3-7 objects per scene) or ``"complex"`` (8-16).
        source: ``"real"`` or ``"synthetic"``.
        scene_objects: the objects of each scene, when known (for the perception task and the
            breakdowns); G must then equal their intersection restricted to the candidates.
        similar_distractor: whether a candidate outside G shares its shape (type) with an object
            of G and differs from it in exactly one attribute.

    The constructor runs :func:`validate`.
    """

    id: str
    images: tuple[Any, Any]
    candidates: list[str]
    gt_common: list[str]
    split: str = "common-o"
    source: str = "synthetic"
    scene_objects: tuple[list[str], list[str]] = field(default_factory=lambda: ([], []))
    similar_distractor: bool = False

    def __post_init__(self) -> None:
        validate(self, owner="Example")

    @property
    def gt_set(self) -> frozenset[str]:
        """G as a set; ``{NONE_OPTION}`` when no candidate is common."""
        return frozenset(self.gt_common) if self.gt_common else frozenset([NONE_OPTION])

    def perception_gt(self, image_index: int) -> frozenset[str]:
        """The candidates present in scene ``image_index`` (the perception task, Sec. 4)."""
        present = set(self.scene_objects[image_index]) & set(self.candidates)
        return frozenset(present) if present else frozenset([NONE_OPTION])

    def image(self, index: int) -> np.ndarray:
        """Scene ``index`` as an ``(H, W, 3)`` uint8 array (read from disk when a path)."""
        img = self.images[index]
        if isinstance(img, (str, os.PathLike)):
            from PIL import Image

            with Image.open(img) as im:
                return np.asarray(im.convert("RGB"))
        return img


def _check_image(img: Any, name: str, owner: str) -> None:
    if isinstance(img, (str, os.PathLike)):
        return
    if not isinstance(img, np.ndarray):
        raise param_error(
            name, owner, "an (H, W, 3) uint8 array or a path", describe(img), cls=TypeError
        )
    if img.dtype != np.uint8:
        raise param_error(name, owner, "an (H, W, 3) uint8 array", describe(img), cls=TypeError)
    if img.ndim != 3 or img.shape[2] != 3 or min(img.shape[:2]) < 1 or max(img.shape) > _MAX_SIDE:
        raise param_error(
            name, owner, f"an (H, W, 3) uint8 array with 1 <= H, W <= {_MAX_SIDE}", describe(img)
        )


def _check_names(value: Any, name: str, owner: str) -> list[str]:
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise param_error(name, owner, "a list of strings", describe(value), cls=TypeError)
    if not all(isinstance(v, str) and v.strip() for v in value):
        raise param_error(
            name, owner, "a list of non-empty strings", describe(value), cls=TypeError
        )
    return list(value)


def validate(example: Example, *, owner: str = "validate") -> Example:
    """Check an example; raise ``ValueError``/``TypeError`` naming the offending field.

    Checks: exactly two images, each ``(H, W, 3)`` uint8 or a path; candidates distinct, at
    most 26, with :data:`NONE_OPTION` exactly once; every object of G among the candidates, G
    without duplicates and without the NONE option; ``split`` and ``source`` known; when
    ``scene_objects`` are given, G equals their intersection restricted to the candidates.
    Returns the example.
    """
    if not isinstance(example, Example):
        raise param_error("example", owner, "a commono.Example", describe(example), cls=TypeError)
    if not isinstance(example.id, str) or not example.id:
        raise param_error("id", owner, "a non-empty string", describe(example.id), cls=TypeError)
    images = example.images
    if isinstance(images, (str, bytes, np.ndarray)) or not isinstance(images, (tuple, list)):
        raise param_error("images", owner, "a pair of images", describe(images), cls=TypeError)
    if len(images) != 2:
        raise param_error("images", owner, "exactly two images", f"{len(images)} images")
    for img in images:
        _check_image(img, "images", owner)
    cands = _check_names(example.candidates, "candidates", owner)
    if len(set(cands)) != len(cands):
        dupes = sorted({c for c in cands if cands.count(c) > 1})
        raise param_error("candidates", owner, "a list of distinct options", f"duplicates {dupes}")
    if cands.count(NONE_OPTION) != 1:
        raise param_error("candidates", owner, f"a list holding {NONE_OPTION!r} once", cands)
    if len(cands) > MAX_OPTIONS:
        raise param_error(
            "candidates", owner, f"at most {MAX_OPTIONS} options (A-Z)", f"{len(cands)} options"
        )
    gt = _check_names(example.gt_common, "gt_common", owner)
    if NONE_OPTION in gt:
        raise param_error("gt_common", owner, "the common objects only (empty for none)", gt)
    if len(set(gt)) != len(gt):
        raise param_error("gt_common", owner, "a list of distinct objects", gt)
    missing = sorted(set(gt) - set(cands))
    if missing:
        raise param_error(
            "gt_common", owner, "a subset of the candidates", f"{missing} not among them"
        )
    if example.split not in SPLITS:
        raise param_error("split", owner, f"one of {SPLITS}", describe(example.split))
    if example.source not in SOURCES:
        raise param_error("source", owner, f"one of {SOURCES}", describe(example.source))
    scenes = example.scene_objects
    if not isinstance(scenes, (tuple, list)) or len(scenes) != 2:
        raise param_error(
            "scene_objects", owner, "a pair of object lists", describe(scenes), cls=TypeError
        )
    s1 = _check_names(scenes[0], "scene_objects", owner) if scenes[0] else []
    s2 = _check_names(scenes[1], "scene_objects", owner) if scenes[1] else []
    if s1 and s2 and set(s1) & set(s2) & set(cands) != set(gt):
        raise param_error("gt_common", owner, "the candidates present in both scenes", sorted(gt))
    if type(example.similar_distractor).__name__ not in ("bool", "bool_"):
        raise param_error(
            "similar_distractor",
            owner,
            "True or False",
            describe(example.similar_distractor),
            cls=TypeError,
        )
    return example


def save_jsonl(
    examples: list[Example], path: str | os.PathLike, image_dir: str | os.PathLike
) -> Path:
    """Write ``examples`` as JSON lines at ``path``, their images as PNG files in ``image_dir``.

    Image paths are stored relative to the JSONL file's folder when ``image_dir`` lies below it.
    Returns ``path``.
    """
    from PIL import Image

    if not isinstance(examples, (list, tuple)):
        raise param_error(
            "examples", "save_jsonl", "a list of Example", describe(examples), cls=TypeError
        )
    for ex in examples:
        if not isinstance(ex, Example):
            raise param_error(
                "examples", "save_jsonl", "a list of Example", describe(ex), cls=TypeError
            )
        validate(ex, owner="save_jsonl")
    path, image_dir = Path(path), Path(image_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    image_dir.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as f:
        for ex in examples:
            stored = []
            for k in range(2):
                file = image_dir / f"{ex.id}_{k}.png"
                Image.fromarray(ex.image(k)).save(file)
                try:
                    stored.append(str(file.resolve().relative_to(path.parent.resolve())))
                except ValueError:
                    stored.append(str(file.resolve()))
            row = {
                "id": ex.id,
                "images": stored,
                "candidates": list(ex.candidates),
                "gt_common": list(ex.gt_common),
                "split": ex.split,
                "source": ex.source,
                "scene_objects": [list(ex.scene_objects[0]), list(ex.scene_objects[1])],
                "similar_distractor": bool(ex.similar_distractor),
            }
            f.write(json.dumps(row) + "\n")
    return path


def load_jsonl(
    path: str | os.PathLike, *, load_images: bool = True, limit: int | None = None
) -> list[Example]:
    """Read examples written by :func:`save_jsonl` (or by hand in the same format).

    Relative image paths are resolved against the JSONL file's folder; with ``load_images`` the
    PNGs are decoded into uint8 arrays, else the examples hold the paths. ``limit`` reads at most
    that many lines.
    """
    p = Path(path)
    if not p.is_file():
        raise param_error("path", "load_jsonl", "an existing JSONL file", str(path))
    if limit is not None:
        check_int("limit", "load_jsonl", limit, low=1)
    load_images = check_bool("load_images", "load_jsonl", load_images)
    out = []
    with p.open(encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            if limit is not None and len(out) >= limit:
                break
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise param_error(
                    "path", "load_jsonl", "a JSONL file", f"bad JSON on line {line_no}"
                ) from exc
            images = [
                (p.parent / img) if not os.path.isabs(img) else Path(img) for img in row["images"]
            ]
            ex = Example(
                id=row["id"],
                images=tuple(str(i) for i in images),
                candidates=row["candidates"],
                gt_common=row["gt_common"],
                split=row.get("split", "common-o"),
                source=row.get("source", "real"),
                scene_objects=tuple(row.get("scene_objects", [[], []])),
                similar_distractor=bool(row.get("similar_distractor", False)),
            )
            if load_images:
                ex.images = (ex.image(0), ex.image(1))
            out.append(ex)
    return out
