"""A tiny two-stage CNN detector over the 192-type vocabulary, trained on single scenes.

It stands in for a model's single-image perception: ``PerceptionIntersectAdapter`` detects the
objects of each image and intersects the two sets. Stage 1, a fully convolutional network, maps
an ``(S, S, 3)`` scene to a grid of cells (stride 8) and predicts per cell whether an object's
centre lies in it, and that object's colour (8) and pattern (3). Stage 2, a small CNN, reads a
``40 x 40`` crop around each cell that holds a centre and classifies the object's shape (8).
Both are trained on single synthetic scenes against the renderer's label map (the visible
centroid of every object). A type ``t = (s, c, p)`` gets the probability
``max_cells p_obj p_shape(s) p_colour(c) p_pattern(p)`` and is detected above the threshold.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from commono.render import COLOURS, PATTERNS, SHAPES, VOCAB
from paperkit import check_array, check_int, check_real, check_tensor, describe, param_error

__all__ = ["TinyDetector", "train_detector"]

_N_SHAPE, _N_COLOUR, _N_PATTERN = len(SHAPES), len(COLOURS), len(PATTERNS)
_INDEX = {v: k for k, v in enumerate(VOCAB)}
_CACHE_SIZE = 20_000
#: Pixels per cell of the stage-1 grid.
STRIDE = 8
#: Side of the stage-2 crop around a cell (covers the largest object plus the cell's slack).
CROP = 40
#: Weight of the no-centre class in the stage-1 loss (most cells hold no object centre).
BG_WEIGHT = 0.1
#: Cells with ``p_obj`` above this get a stage-2 crop.
PROPOSAL = 0.2


def _block(cin: int, cout: int, stride: int = 1, dilation: int = 1) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride, dilation, dilation=dilation),
        nn.BatchNorm2d(cout),
        nn.ReLU(),
    )


class TinyDetector(nn.Module):
    """Two-stage detector: per-cell centre/colour/pattern, per-crop shape.

    ``forward(x (B, 3, S, S) float in [0, 1]) -> (centre (B, 2, S/8, S/8), colour (B, 8, ...),
    pattern (B, 3, ...))`` logits of stage 1; ``shape_logits(crops (N, 3, 40, 40)) -> (N, 8)`` of
    stage 2. :meth:`type_proba` gives ``p(t) = max_cells p_obj p_s p_c p_p`` for the 192 types
    (VOCAB order: shape-major, then colour, then pattern; cells with ``p_obj`` below
    :data:`PROPOSAL` score 0). :meth:`detect` returns the types above ``threshold``; probabilities
    of images seen before are cached by a hash of the pixels, so adapters share the work.
    """

    def __init__(self, width: int = 24, threshold: float = 0.5) -> None:
        super().__init__()
        w = check_int("width", "TinyDetector", width, low=4, high=256)
        self.threshold = check_real(
            "threshold", "TinyDetector", threshold, low=0, high=1, low_open=True, high_open=True
        )
        self.trunk = nn.Sequential(
            _block(3, w, 2),
            _block(w, w),
            nn.MaxPool2d(2),
            _block(w, 2 * w),
            nn.MaxPool2d(2),
            _block(2 * w, 2 * w),
            _block(2 * w, 2 * w, dilation=2),
        )
        self.head = nn.Conv2d(2 * w, 2 + _N_COLOUR + _N_PATTERN, 1)
        self.shape_net = nn.Sequential(
            _block(3, w),
            nn.MaxPool2d(2),
            _block(w, 2 * w),
            nn.MaxPool2d(2),
            _block(2 * w, 3 * w),
            nn.MaxPool2d(2),
            _block(3 * w, 3 * w),
            nn.AdaptiveMaxPool2d(1),
            nn.Flatten(),
            nn.Linear(3 * w, _N_SHAPE),
        )
        self._cache: OrderedDict[bytes, np.ndarray] = OrderedDict()

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        check_tensor("x", "TinyDetector", x, ndim=4)
        if x.shape[1] != 3 or min(x.shape[2:]) < 16 or x.shape[2] % STRIDE or x.shape[3] % STRIDE:
            raise param_error(
                "x",
                "TinyDetector",
                f"of shape (B, 3, H, W) with H, W >= 16 multiples of {STRIDE}",
                describe(x),
            )
        x = x.to(self.head.weight.dtype)  # documented cast: the weights' float dtype
        out = self.head(self.trunk(x))
        return out.split([2, _N_COLOUR, _N_PATTERN], dim=1)

    def shape_logits(self, crops: torch.Tensor) -> torch.Tensor:
        """Stage 2: shape logits ``(N, 8)`` of ``(N, 3, 40, 40)`` crops centred on objects."""
        check_tensor("crops", "TinyDetector.shape_logits", crops, shape=(None, 3, CROP, CROP))
        return self.shape_net(crops)

    def type_proba(self, x: torch.Tensor) -> torch.Tensor:
        """``(B, 192)`` probabilities ``max_cells p_obj p_s p_c p_p`` in VOCAB order."""
        centre, colour, pattern = self(x)
        p_obj = centre.softmax(1)[:, 1]
        p_c, p_p = colour.softmax(1), pattern.softmax(1)
        out = torch.zeros(x.shape[0], len(VOCAB))
        b_idx, gy, gx = torch.nonzero(p_obj > PROPOSAL, as_tuple=True)
        if b_idx.numel() == 0:
            return out
        cy, cx = gy * STRIDE + STRIDE // 2, gx * STRIDE + STRIDE // 2
        crops = _crops(x, b_idx, cy, cx)
        p_s = self.shape_logits(crops).softmax(1)
        joint = (
            p_obj[b_idx, gy, gx][:, None, None, None]
            * p_s[:, :, None, None]
            * p_c[b_idx, :, gy, gx][:, None, :, None]
            * p_p[b_idx, :, gy, gx][:, None, None, :]
        ).flatten(1)
        index = b_idx[:, None].expand_as(joint)
        return out.scatter_reduce(0, index, joint, reduce="amax")

    @staticmethod
    def to_tensor(images: np.ndarray) -> torch.Tensor:
        """``(B, S, S, 3)`` uint8 -> ``(B, 3, S, S)`` float32 in [0, 1]."""
        return torch.from_numpy(np.ascontiguousarray(images)).permute(0, 3, 1, 2).float().div(255.0)

    @torch.no_grad()
    def predict_proba(self, images: np.ndarray | Sequence[np.ndarray]) -> np.ndarray:
        """Per-type probabilities ``(B, 192)`` for ``(B, S, S, 3)`` uint8 images (or a list)."""
        owner = "TinyDetector.predict_proba"
        if isinstance(images, (list, tuple)) and images:
            images = np.stack([np.asarray(i) for i in images])
        images = check_array("images", owner, images, ndim=4, kind=None)
        if images.dtype != np.uint8 or images.shape[-1] != 3:
            raise param_error(
                "images", owner, "(B, S, S, 3) uint8 images", describe(images), cls=TypeError
            )
        keys = [
            hashlib.blake2b(im.tobytes(), digest_size=16).digest() + str(im.shape).encode()
            for im in images
        ]
        todo = [k for k, key in enumerate(keys) if key not in self._cache]
        if todo:
            was = self.training
            self.eval()
            for start in range(0, len(todo), 64):
                idx = todo[start : start + 64]
                probs = self.type_proba(self.to_tensor(images[idx])).numpy()
                for k, p in zip(idx, probs, strict=True):
                    self._cache[keys[k]] = p
            self.train(was)
            while len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return np.stack([self._cache[key] for key in keys])

    def detect(self, image: np.ndarray, candidates: Sequence[str] | None = None) -> set[str]:
        """Types (among ``candidates``, default the whole vocabulary; names outside the vocabulary
        are never detected) with probability above ``self.threshold`` in one ``(S, S, 3)`` uint8
        image."""
        p = self.predict_proba(np.asarray(image)[None])[0]
        names = VOCAB if candidates is None else [c for c in candidates if c in _INDEX]
        return {c for c in names if p[_INDEX[c]] > self.threshold}

    def clear_cache(self) -> None:
        """Forget cached probabilities (call after changing the weights)."""
        self._cache.clear()


def _crops(x: torch.Tensor, b: torch.Tensor, cy: torch.Tensor, cx: torch.Tensor) -> torch.Tensor:
    """``(N, 3, CROP, CROP)`` crops of ``x`` centred at integer pixels (zero padded)."""
    half = CROP // 2
    used, inverse = torch.unique(b, return_inverse=True)
    padded = nn.functional.pad(x[used], (half, half, half, half))
    ar = torch.arange(CROP)
    rows = (cy[:, None] + ar[None, :]).long()  # in padded coordinates: centre - half + half
    cols = (cx[:, None] + ar[None, :]).long()
    return padded[inverse[:, None, None], :, rows[:, :, None], cols[:, None, :]].permute(0, 3, 1, 2)


def _stage1_loss(model: TinyDetector, x: torch.Tensor, cells: torch.Tensor) -> torch.Tensor:
    centre, colour, pattern = model(x)
    obj = cells[:, 0] >= 0
    weight = torch.tensor([BG_WEIGHT, 1.0])
    loss = nn.functional.cross_entropy(centre, obj.long(), weight=weight)
    if bool(obj.any()):
        loss = loss + nn.functional.cross_entropy(colour.permute(0, 2, 3, 1)[obj], cells[:, 1][obj])
        loss = loss + nn.functional.cross_entropy(
            pattern.permute(0, 2, 3, 1)[obj], cells[:, 2][obj]
        )
    return loss


def train_detector(
    n_scenes: int = 2000,
    seconds: float = 60.0,
    *,
    epochs: int = 8,
    batch_size: int = 16,
    lr: float = 3e-3,
    width: int = 24,
    image_size: int = 128,
    seed: int = 0,
    scenes: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> TinyDetector:
    """Train a :class:`TinyDetector` on ``n_scenes`` single synthetic scenes (3-16 objects).

    The CPU budget ``seconds`` (``time.process_time``) is split evenly between the stages; each
    runs AdamW (weight decay 1e-4) for at most ``epochs`` epochs with a 20-step warm-up and a
    cosine decay over whichever runs out first, its steps or its half of the budget (so the step
    count is machine dependent; pass a large ``seconds`` for a fixed schedule).
    Stage 1 trains on whole scenes with random horizontal flips;
    stage 2 on ``40 x 40`` crops around each object's visible centroid, jittered by up to half a
    cell as at inference. ``scenes`` supplies pre-made output of
    :func:`commono.generator.make_single_scenes`. Returns the model in eval mode;
    ``model.train_info`` holds steps, epochs, CPU seconds and last losses per stage. With 20
    scenes or more, the first tenth is held out and the detection threshold is set to the one
    (on a 0.05 grid) with the best micro F1 over the 192 types on it.
    """
    owner = "train_detector"
    from commono.generator import make_single_scenes

    n_scenes = check_int("n_scenes", owner, n_scenes, low=1, high=100_000)
    seconds = check_real("seconds", owner, seconds, low=0, low_open=True, high=24 * 3600)
    epochs = check_int("epochs", owner, epochs, low=1, high=10_000)
    batch_size = check_int("batch_size", owner, batch_size, low=1, high=4096)
    lr = check_real("lr", owner, lr, low=0, low_open=True, high=1)
    width = check_int("width", owner, width, low=4, high=256)
    image_size = check_int("image_size", owner, image_size, low=64, high=1024)
    seed = check_int("seed", owner, seed, low=0)
    if scenes is None:
        scenes = make_single_scenes(n_scenes, seed=seed, image_size=image_size, stride=STRIDE)
    if not isinstance(scenes, tuple) or len(scenes) != 4:
        raise param_error(
            "scenes", owner, "the 4-tuple of make_single_scenes", describe(scenes), cls=TypeError
        )
    images = check_array("scenes", owner, scenes[0], ndim=4, kind=None)
    cells = check_array("scenes", owner, scenes[2], ndim=4, kind="int")
    objects = check_array("scenes", owner, scenes[3], ndim=2)
    if (
        images.dtype != np.uint8
        or cells.shape[0] != images.shape[0]
        or cells.shape[-1] * STRIDE != images.shape[2]
    ):
        raise param_error(
            "scenes", owner, f"uint8 images with stride-{STRIDE} cell maps", describe(images)
        )
    torch.manual_seed(seed)
    model = TinyDetector(width)
    gen = np.random.default_rng([seed, 7])
    n_val = images.shape[0] // 10 if images.shape[0] >= 20 else 0
    x_val, labels_val = TinyDetector.to_tensor(images[:n_val]), np.asarray(scenes[1][:n_val])
    images, cells = images[n_val:], cells[n_val:]
    objects = objects[objects[:, 0] >= n_val] - np.array([n_val, 0, 0, 0], dtype=np.float32)
    x_all = TinyDetector.to_tensor(images)
    cells_t = torch.from_numpy(np.ascontiguousarray(cells))
    info: dict[str, Any] = {"n_scenes": int(images.shape[0])}
    start = time.process_time()

    def fit(params, n_items: int, batch: int, step_fn, name: str, budget: float) -> None:
        opt = torch.optim.AdamW(params, lr=lr, weight_decay=1e-4)
        per_epoch = max(1, n_items // batch)
        total = epochs * per_epoch
        t0, step, last = time.process_time(), 0, float("nan")
        while step < total:
            order = gen.permutation(n_items)
            for b in range(per_epoch):
                # cosine decay over whichever runs out first, the steps or the CPU budget
                progress = max(step / total, (time.process_time() - t0) / budget)
                if progress >= 1.0:
                    break
                warm = min(1.0, (step + 1) / 20)
                for group in opt.param_groups:
                    group["lr"] = lr * warm * 0.5 * (1.0 + math.cos(math.pi * progress))
                loss = step_fn(order[b * batch : (b + 1) * batch])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                step, last = step + 1, float(loss.detach())
            else:
                continue
            break
        info[name] = {
            "steps": step,
            "epochs": step / per_epoch,
            "cpu_s": time.process_time() - t0,
            "loss": last,
        }

    def stage1(idx: np.ndarray) -> torch.Tensor:
        x, t = x_all[idx], cells_t[idx]
        if gen.random() < 0.5:
            x, t = x.flip(-1), t.flip(-1)
        return _stage1_loss(model, x, t)

    def stage2(idx: np.ndarray) -> torch.Tensor:
        rows = torch.from_numpy(objects[idx])
        jitter = torch.from_numpy(gen.integers(-STRIDE // 2, STRIDE // 2 + 1, (len(idx), 2)))
        cy = rows[:, 1].long() + jitter[:, 0]
        cx = rows[:, 2].long() + jitter[:, 1]
        crops = _crops(x_all, rows[:, 0].long(), cy, cx)
        if gen.random() < 0.5:
            crops = crops.flip(-1)
        return nn.functional.cross_entropy(model.shape_net(crops), rows[:, 3].long())

    model.train()
    stage1_params = [*model.trunk.parameters(), *model.head.parameters()]
    fit(stage1_params, images.shape[0], batch_size, stage1, "stage1", seconds / 2)
    fit(
        list(model.shape_net.parameters()),
        objects.shape[0],
        4 * batch_size,
        stage2,
        "stage2",
        seconds / 2,
    )
    model.eval()
    if n_val:
        with torch.no_grad():
            probs = model.type_proba(x_val).numpy()
        truth = labels_val > 0.5
        best = (-1.0, model.threshold)
        for th in np.arange(0.05, 0.95, 0.05):
            pred = probs > th
            tp = float((pred & truth).sum())
            f1 = 2 * tp / max(1.0, float(pred.sum() + truth.sum()))
            best = max(best, (f1, float(th)))
        info["val_f1"], model.threshold = best
    info["threshold"] = model.threshold
    info["cpu_s"] = time.process_time() - start
    model.train_info = info
    return model
