"""A small query-based BEV tracker (MOTR / PF-Track style) and the SynCL training criterion.

:class:`QueryTracker`: a tiny CNN BEV encoder (the BEV memory), learned object queries with
reference points, track queries carried from frame to frame, the :class:`SharedDecoder`, and
class / box heads shared by both decoder passes. :class:`SynCLCriterion`: the baseline tracker
loss ``L_S`` (fixed track identities, Hungarian newborn matching), plus the C-decoder loss
``L_C`` with Task-specific Hybrid Matching, Dynamic Query Filtering and ``0.1 * L_icl`` (the
paper's Sec. 3). :func:`train_tracker` trains on sequences; only the
S-decoder runs in :meth:`QueryTracker.run_tracker`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from paperkit import check_array, check_bool, check_choice, check_int, check_real, param_error
from syncl.contrastive import instance_contrastive_loss
from syncl.decoder import SharedDecoder
from syncl.matching import FOCAL_ALPHA, FOCAL_GAMMA, DynamicQueryFilter, hybrid_match

__all__ = ["QueryTracker", "SynCLCriterion", "frame_targets", "train_tracker"]


def _mlp(d_in: int, d_hidden: int, d_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(d_in, d_hidden), nn.ReLU(), nn.Linear(d_hidden, d_out))


def _inverse_sigmoid(x: torch.Tensor, eps: float = 1e-4) -> torch.Tensor:
    x = x.clamp(eps, 1 - eps)
    return torch.log(x / (1 - x))


def frame_targets(frame: Sequence[dict[str, Any]]) -> dict[str, torch.Tensor]:
    """Targets of one frame: ``labels`` (G,), ``boxes`` (G, 6) = (cx, cy, w, l, sin, cos) in
    metres, ``ids`` (G,), from the ground-truth dicts of :func:`syncl.make_bev_sequences`."""
    boxes = [[*o["center"], *o["size"], np.sin(o["heading"]), np.cos(o["heading"])] for o in frame]
    return {
        "labels": torch.tensor([int(o.get("label", 0)) for o in frame], dtype=torch.long),
        "boxes": torch.tensor(boxes, dtype=torch.float32).reshape(-1, 6),
        "ids": torch.tensor([int(o["id"]) for o in frame], dtype=torch.long),
    }


class QueryTracker(nn.Module):
    """Query-based tracker on BEV rasters ``(2, grid, grid)``.

    Encoder: a 3x3 convolution of stride 2 and two 3x3 convolutions dilated by 2 and 4 give a
    ``(grid/2)^2``-token memory plus a learned position embedding. Queries: ``n_obj_queries``
    learned object queries with learned reference points (started on a regular grid) and the
    track queries of the previous frame (content = the matched query's output embedding,
    reference = its predicted centre plus its last displacement, a constant-velocity motion
    model); every query adds the memory sampled at its reference point to its content. Heads
    on every decoder layer: one logit per class (sigmoid focal) and the box
    ``(cx, cy, w, l, sin, cos)`` in metres, the centre as a refinement of the reference point in
    logit space. ``emb_head`` maps decoder outputs to the
    64-d embeddings of the contrastive loss (used in training only).
    """

    def __init__(
        self,
        grid: int = 32,
        d_model: int = 64,
        n_obj_queries: int = 16,
        n_layers: int = 3,
        n_heads: int = 4,
        ff: int = 128,
        n_classes: int = 1,
        cell: float = 1.0,
        emb_dim: int = 64,
    ) -> None:
        super().__init__()
        owner = "QueryTracker"
        self.grid = check_int("grid", owner, grid, low=8, high=512)
        if grid % 2:
            raise param_error("grid", owner, "a multiple of 2", grid)
        self.d_model = check_int("d_model", owner, d_model, low=4, high=4096)
        self.n_obj = check_int("n_obj_queries", owner, n_obj_queries, low=1, high=4096)
        self.n_classes = check_int("n_classes", owner, n_classes, low=1, high=1000)
        self.extent = check_real("cell", owner, cell, low=0, low_open=True, high=100) * grid
        check_int("emb_dim", owner, emb_dim, low=1, high=4096)
        self.encoder = nn.Sequential(
            nn.Conv2d(2, 32, 3, stride=2, padding=1),
            nn.ReLU(),
            nn.Conv2d(32, d_model, 3, padding=2, dilation=2),
            nn.ReLU(),
            nn.Conv2d(d_model, d_model, 3, padding=4, dilation=4),
        )
        side = grid // 2
        ys, xs = torch.meshgrid(torch.arange(side), torch.arange(side), indexing="ij")
        coords = torch.stack([xs, ys], -1).reshape(-1, 2).float().add(0.5).div(side)
        self.register_buffer("mem_coords", coords, persistent=False)
        self.pos_mlp = _mlp(2, d_model, d_model)
        self.obj_content = nn.Embedding(n_obj_queries, d_model)
        self.obj_ref = nn.Embedding(n_obj_queries, 2)
        side_q = int(np.ceil(np.sqrt(n_obj_queries)))  # anchors on a regular grid
        grid_pts = (torch.arange(side_q, dtype=torch.float32) + 0.5) / side_q
        anchors = torch.cartesian_prod(grid_pts, grid_pts)[:n_obj_queries]
        with torch.no_grad():
            self.obj_ref.weight.copy_(_inverse_sigmoid(anchors))
        self.decoder = SharedDecoder(n_layers, d_model, n_heads, ff)
        self.cls_head = nn.Linear(d_model, n_classes)
        nn.init.constant_(self.cls_head.bias, -2.0)
        self.box_head = _mlp(d_model, d_model, 6)
        self.emb_head = _mlp(d_model, d_model, emb_dim)

    def memory(self, x: torch.Tensor) -> torch.Tensor:
        """BEV memory ``(B, (grid/2)^2, d)`` of rasters ``(B, 2, grid, grid)``."""
        f = self.encoder(x).flatten(2).transpose(1, 2)
        return f + self.pos_mlp(self.mem_coords.to(f.dtype))

    def queries(
        self, memory: torch.Tensor, track_content: torch.Tensor, track_ref: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``[track; object]`` query contents and reference points (normalised to [0, 1]).
        Every query's content (a track query's carried embedding, an object query's learned
        embedding) gets the BEV memory sampled bilinearly at its reference point added, so a
        track query reads the evidence where it expects its object."""
        B = track_content.shape[0]
        ref = torch.cat([track_ref, self.obj_ref.weight.sigmoid()[None].expand(B, -1, -1)], 1)
        side = self.grid // 2
        fmap = memory.transpose(1, 2).reshape(B, self.d_model, side, side)
        local = F.grid_sample(fmap, ref[:, :, None] * 2 - 1, align_corners=False)[..., 0]
        content = torch.cat([track_content, self.obj_content.weight[None].expand(B, -1, -1)], 1)
        return content + local.transpose(1, 2), ref

    def heads(self, h: torch.Tensor, ref: torch.Tensor) -> dict[str, torch.Tensor]:
        """Class logits ``(B, Q, C)`` and boxes ``(B, Q, 6)`` (metres) of decoder outputs."""
        raw = self.box_head(h)
        centre = (_inverse_sigmoid(ref) + raw[..., :2]).sigmoid() * self.extent
        size = raw[..., 2:4].clamp(-4, 4).exp()
        return {"logits": self.cls_head(h), "boxes": torch.cat([centre, size, raw[..., 4:]], -1)}

    def decode(
        self,
        memory: torch.Tensor,
        track_content: torch.Tensor,
        track_ref: torch.Tensor,
        pad_mask: torch.Tensor | None,
        self_attn: bool,
    ) -> tuple[list[torch.Tensor], list[dict[str, torch.Tensor]]]:
        """One decoder pass (S-decoder: ``self_attn=True``; C-decoder: False): the per-layer
        outputs and the per-layer predictions."""
        q, ref = self.queries(memory, track_content, track_ref)
        outs = self.decoder(
            q, memory, query_pos=self.pos_mlp(ref), self_attn=self_attn, pad_mask=pad_mask
        )
        return outs, [self.heads(h, ref) for h in outs]

    @torch.no_grad()
    def run_tracker(
        self,
        seq: Any,
        new_thr: float = 0.5,
        keep_thr: float = 0.35,
        max_misses: int = 3,
    ) -> list[list[dict[str, Any]]]:
        """Track one sequence ``(T, 2, grid, grid)`` with the S-decoder only (inference).

        Per frame: object queries scoring at least ``new_thr`` start new tracks; a track query
        scoring at least ``keep_thr`` updates its track (content, reference = centre +
        displacement), otherwise it counts a miss, and a track is dropped after ``max_misses``
        consecutive misses (its reference keeps moving with its last displacement meanwhile).
        Returns per frame the list of ``dict(id, center (2,), size (2,), score)`` of the tracks
        confirmed in that frame."""
        owner = "QueryTracker.run_tracker"
        if isinstance(seq, torch.Tensor):
            seq = seq.detach().cpu().numpy()
        x = check_array("seq", owner, seq, shape=(None, 2, self.grid, self.grid))
        new_thr = check_real("new_thr", owner, new_thr, low=0, high=1)
        keep_thr = check_real("keep_thr", owner, keep_thr, low=0, high=1)
        max_misses = check_int("max_misses", owner, max_misses, low=1, high=10_000)
        was_training = self.training
        self.eval()
        dtype = next(self.parameters()).dtype
        xt = torch.as_tensor(x, dtype=dtype)
        tracks: list[dict[str, Any]] = []
        next_id = 0
        out: list[list[dict[str, Any]]] = []
        d = self.d_model
        for t in range(xt.shape[0]):
            mem = self.memory(xt[t : t + 1])
            content = (
                torch.stack([tr["content"] for tr in tracks])[None]
                if tracks
                else torch.zeros(1, 0, d, dtype=dtype)
            )
            ref = (
                torch.stack([tr["ref"] for tr in tracks])[None]
                if tracks
                else torch.zeros(1, 0, 2, dtype=dtype)
            )
            hs, preds = self.decode(mem, content, ref, None, self_attn=True)
            h, p = hs[-1][0], preds[-1]
            score = p["logits"][0].sigmoid().amax(-1)
            boxes = p["boxes"][0]
            frame, alive = [], []
            for i, tr in enumerate(tracks):
                if score[i] >= keep_thr:
                    _advance(tr, h[i], boxes[i, :2] / self.extent)
                    frame.append(self._box(tr["id"], boxes[i], score[i]))
                else:
                    _advance(tr, None, None)
                if tr["misses"] < max_misses:
                    alive.append(tr)
            n_t = len(tracks)
            for j in range(self.n_obj):
                if score[n_t + j] >= new_thr:
                    centre = boxes[n_t + j, :2] / self.extent
                    alive.append(_new_track(next_id, h[n_t + j], centre))
                    frame.append(self._box(next_id, boxes[n_t + j], score[n_t + j]))
                    next_id += 1
            tracks = alive
            out.append(frame)
        self.train(was_training)
        return out

    @staticmethod
    def _box(track_id: int, box: torch.Tensor, score: torch.Tensor) -> dict[str, Any]:
        b = box.float().numpy()
        return {
            "id": int(track_id),
            "center": b[:2].copy(),
            "size": b[2:4].copy(),
            "score": float(score),
            "label": 0,
        }


def _new_track(track_id: int, content: torch.Tensor, centre: torch.Tensor) -> dict[str, Any]:
    """A track started by an object query: no displacement yet."""
    return {
        "id": track_id,
        "content": content,
        "centre": centre,
        "vel": torch.zeros_like(centre),
        "ref": centre.clamp(0.01, 0.99),
        "misses": 0,
    }


def _advance(tr: dict[str, Any], content: torch.Tensor | None, centre: torch.Tensor | None) -> None:
    """Propagate a track to the next frame (constant-velocity reference). A hit (``content``
    given) takes the new embedding and centre and re-estimates the displacement; a miss keeps
    the embedding, moves the reference by the last displacement and counts the miss."""
    if content is None:
        tr["misses"] += 1
        tr["ref"] = (tr["ref"] + tr["vel"]).clamp(0.01, 0.99)
        return
    tr["vel"] = (centre - tr["centre"]) / (tr["misses"] + 1)
    tr.update(content=content, centre=centre, misses=0, ref=(centre + tr["vel"]).clamp(0.01, 0.99))


def _focal_loss(logits: torch.Tensor, target: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """Sigmoid focal loss (alpha 0.25, gamma 2) summed over the valid queries."""
    p = logits.sigmoid()
    ce = F.binary_cross_entropy_with_logits(logits, target, reduction="none")
    pt = p * target + (1 - p) * (1 - target)
    a = FOCAL_ALPHA * target + (1 - FOCAL_ALPHA) * (1 - target)
    return (a * (1 - pt).pow(FOCAL_GAMMA) * ce * valid[..., None]).sum()


class SynCLCriterion(nn.Module):
    """The training loss of one frame: ``L = L_S + L_C + w_icl * L_icl`` (Sec. 3).

    ``L_S``: per S-decoder layer, ``w_cls * focal + w_l1 * L1`` with track queries keeping their
    identity's target and object queries matched one-to-one (Hungarian) to newborn targets;
    the baseline tracker's loss. ``L_C`` (``hybrid=True``): the same losses on the C-decoder
    with top-k one-to-many matching of object queries to all targets, candidates pruned by
    :class:`DynamicQueryFilter` when ``filter=True`` (else all top-k kept). ``L_icl``
    (``icl=True``): :func:`instance_contrastive_loss` between the last S-decoder layer's track
    queries and the last C-decoder layer's object queries assigned after filtering. Each loss is
    normalised by the number of targets of the batch.
    """

    def __init__(
        self,
        hybrid: bool = True,
        filter: bool = True,
        icl: bool = True,
        k: int = 4,
        tau: float = 0.1,
        kernel: str = "cosine",
        w_cls: float = 2.0,
        w_l1: float = 0.25,
        w_icl: float = 0.1,
        query_filter: DynamicQueryFilter | None = None,
    ) -> None:
        super().__init__()
        owner = "SynCLCriterion"
        self.hybrid = check_bool("hybrid", owner, hybrid)
        self.filter = check_bool("filter", owner, filter)
        self.icl = check_bool("icl", owner, icl)
        if (self.filter or self.icl) and not self.hybrid:
            bad = "filter" if self.filter else "icl"
            raise param_error(
                bad, owner, "False when hybrid=False (it acts on the C-decoder)", True
            )
        self.k = check_int("k", owner, k, low=1, high=10_000)
        self.tau = check_real("tau", owner, tau, low=0, low_open=True)
        self.kernel = check_choice("kernel", owner, kernel, ("cosine", "rbf"))
        self.w_cls = check_real("w_cls", owner, w_cls, low=0)
        self.w_l1 = check_real("w_l1", owner, w_l1, low=0)
        self.w_icl = check_real("w_icl", owner, w_icl, low=0)
        self.query_filter = query_filter if query_filter is not None else DynamicQueryFilter()

    def _set_loss(self, preds, assign, valid, n_tgt, targets) -> torch.Tensor:
        logits, boxes = preds["logits"], preds["boxes"]
        bi = torch.cat([torch.full_like(q, b) for b, (q, _) in enumerate(assign)])
        qi = torch.cat([q for q, _ in assign])
        tb = torch.cat([t["boxes"][g] for t, (_, g) in zip(targets, assign, strict=True)])
        tl = torch.cat([t["labels"][g] for t, (_, g) in zip(targets, assign, strict=True)])
        cls_t = torch.zeros_like(logits)
        cls_t[bi, qi, tl] = 1.0
        loss = self.w_cls * _focal_loss(logits, cls_t, valid)
        if qi.numel():
            loss = loss + self.w_l1 * (boxes[bi, qi] - tb.to(boxes.dtype)).abs().sum()
        return loss / n_tgt

    def forward(
        self,
        preds_S: Sequence[dict[str, torch.Tensor]],
        preds_C: Sequence[dict[str, torch.Tensor]] | None,
        targets: Sequence[dict[str, torch.Tensor]],
        track_ids: torch.Tensor,
        valid: torch.Tensor,
        emb_track: torch.Tensor | None = None,
        emb_obj: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, dict[str, Any]]:
        """Loss of one frame. ``preds_S`` / ``preds_C``: per-layer predictions of the two
        passes; ``track_ids`` (B, N_t) (-1: no identity); ``valid`` (B, Q) bool (False: padded
        slot); ``emb_track`` (B, N_t, e) and ``emb_obj`` (B, N_o, e): ICL embeddings.
        Returns the loss and the last S-layer assignment (``info["S"]``) for track updates."""
        n_tgt = max(sum(len(t["ids"]) for t in targets), 1)
        if self.hybrid and preds_C is None:
            raise param_error("preds_C", "SynCLCriterion", "the C-decoder predictions", None)
        loss = preds_S[0]["logits"].sum() * 0.0
        info: dict[str, Any] = {"n_candidates": 0, "n_kept": 0, "filter_open": 0, "icl": 0.0}
        layers = range(len(preds_S))
        match = None
        for layer in layers:
            pc = preds_C[layer] if self.hybrid else None
            match = hybrid_match(
                preds_S[layer],
                pc,
                targets,
                track_ids,
                k=self.k,
                use_filter=self.filter,
                query_filter=self.query_filter,
            )
            loss = loss + self._set_loss(preds_S[layer], match["S"], valid, n_tgt, targets)
            if self.hybrid:
                loss = loss + self._set_loss(pc, match["C"], valid, n_tgt, targets)
                info["n_candidates"] += match["n_candidates"]
                info["n_kept"] += match["n_kept"]
                info["filter_open"] += int(match["filter_open"])
        if self.icl and emb_track is not None and emb_obj is not None and match is not None:
            n_t = track_ids.shape[1]
            terms = []
            for b, (q, g) in enumerate(match["C_objects"]):
                tids = track_ids[b]
                bound = torch.nonzero(tids >= 0).flatten()
                if q.numel() == 0 or bound.numel() == 0:
                    continue
                obj_ids = targets[b]["ids"][g]
                terms.append(
                    instance_contrastive_loss(
                        emb_track[b, bound],
                        tids[bound],
                        emb_obj[b, q - n_t],
                        obj_ids,
                        tau=self.tau,
                        kernel=self.kernel,
                    )
                )
            if terms:
                l_icl = torch.stack(terms).mean()
                info["icl"] = float(l_icl.detach())
                loss = loss + self.w_icl * l_icl
        info["S"] = match["S"] if match is not None else []
        return loss, info


def _track_tensors(tracks: list[list[dict]], d: int, dtype: torch.dtype):
    """Pad the per-element track lists into (B, N_t, d) contents, (B, N_t, 2) references,
    (B, N_t) identities (-1: padding) and the (B, N_t) padding mask."""
    B = len(tracks)
    n_t = max((len(t) for t in tracks), default=0)
    content = torch.zeros(B, n_t, d, dtype=dtype)
    ref = torch.full((B, n_t, 2), 0.5, dtype=dtype)
    ids = torch.full((B, n_t), -1, dtype=torch.long)
    pad = torch.ones(B, n_t, dtype=torch.bool)
    for b, tl in enumerate(tracks):
        for i, tr in enumerate(tl):
            content[b, i], ref[b, i], ids[b, i], pad[b, i] = (
                tr["content"],
                tr["ref"],
                tr["id"],
                False,
            )
    return content, ref, ids, pad


def train_tracker(
    model: QueryTracker,
    rasters: Any,
    gt: Sequence[Sequence[Sequence[dict[str, Any]]]],
    criterion: SynCLCriterion,
    steps: int = 500,
    batch_size: int = 8,
    clip_len: int = 5,
    lr: float = 1e-3,
    seed: int = 0,
    max_misses: int = 3,
    callback: Callable[[int, float], None] | None = None,
) -> dict[str, Any]:
    """Train ``model`` with ``criterion`` on sequences (AdamW at a constant ``lr``,
    gradient clipping at 1).

    Each step draws ``batch_size`` sequences and a clip of ``clip_len`` consecutive frames and
    runs the tracker through it as in training of MOTR / PF-Track: per frame the S-decoder (and
    the C-decoder when ``criterion.hybrid``) decodes the ``[track; object]`` queries, the loss is
    taken, and the last S-layer assignment updates the tracks: a track query whose identity is
    present continues with its output embedding (detached) and predicted centre, one whose
    identity is absent counts a miss and is dropped after ``max_misses``, and object queries
    matched to newborn targets start tracks. Returns the loss history, the filter statistics
    and the CPU seconds per step.
    """
    owner = "train_tracker"
    if not isinstance(model, QueryTracker):
        raise param_error("model", owner, "a QueryTracker", type(model).__name__, cls=TypeError)
    if not isinstance(criterion, SynCLCriterion):
        raise param_error(
            "criterion", owner, "a SynCLCriterion", type(criterion).__name__, cls=TypeError
        )
    if isinstance(rasters, torch.Tensor):
        rasters = rasters.detach().cpu().numpy()
    dims: dict = {}
    x = check_array(
        "rasters", owner, rasters, shape=("n", "T", 2, model.grid, model.grid), dims=dims
    )
    if (
        not isinstance(gt, Sequence)
        or len(gt) != x.shape[0]
        or any(not isinstance(s, Sequence) or len(s) != x.shape[1] for s in gt)
    ):
        raise param_error(
            "gt",
            owner,
            f"{x.shape[0]} sequences of {x.shape[1]} frames",
            type(gt).__name__,
            cls=TypeError if not isinstance(gt, Sequence) else ValueError,
        )
    steps = check_int("steps", owner, steps, low=1, high=10**7)
    batch_size = check_int("batch_size", owner, batch_size, low=1, high=4096)
    clip_len = check_int("clip_len", owner, clip_len, low=1, high=x.shape[1])
    lr = check_real("lr", owner, lr, low=0, low_open=True, high=10)
    seed = check_int("seed", owner, seed, low=0)
    max_misses = check_int("max_misses", owner, max_misses, low=1, high=10_000)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    targets = [[frame_targets(f) for f in s] for s in gt]
    xt = torch.as_tensor(x, dtype=torch.float32)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    model.train()
    history: dict[str, list] = {
        "loss": [],
        "n_candidates": [],
        "n_kept": [],
        "filter_open": [],
        "icl": [],
        "cpu_s": [],
    }
    d = model.d_model
    for step in range(steps):
        cpu0 = time.process_time()
        idx = rng.choice(x.shape[0], size=min(batch_size, x.shape[0]), replace=False)
        start = int(rng.integers(0, x.shape[1] - clip_len + 1))
        tracks: list[list[dict]] = [[] for _ in idx]
        total = xt.new_zeros(())
        stats = {"n_candidates": 0, "n_kept": 0, "filter_open": 0, "icl": 0.0}
        for t in range(start, start + clip_len):
            tg = [targets[i][t] for i in idx]
            mem = model.memory(xt[idx, t])
            content, ref, tids, pad = _track_tensors(tracks, d, mem.dtype)
            n_t = tids.shape[1]
            valid = torch.cat([~pad, torch.ones(len(idx), model.n_obj, dtype=torch.bool)], 1)
            hs, preds_s = model.decode(mem, content, ref, ~valid if n_t else None, self_attn=True)
            preds_c = emb_t = emb_o = None
            if criterion.hybrid:
                hc, preds_c = model.decode(mem, content, ref, None, self_attn=False)
                if criterion.icl:
                    emb_t = model.emb_head(hs[-1][:, :n_t])
                    emb_o = model.emb_head(hc[-1][:, n_t:])
            loss, info = criterion(preds_s, preds_c, tg, tids, valid, emb_t, emb_o)
            total = total + loss
            for key in stats:
                stats[key] += info[key]
            last = preds_s[-1]["boxes"].detach()
            h_last = hs[-1].detach()
            for b in range(len(idx)):
                q, g = info["S"][b]
                hit = dict(zip(q.tolist(), g.tolist(), strict=True))
                kept = []
                for i, tr in enumerate(tracks[b]):
                    if i in hit:
                        _advance(tr, h_last[b, i], last[b, i, :2] / model.extent)
                    else:
                        _advance(tr, None, None)
                    if tr["misses"] < max_misses:
                        kept.append(tr)
                for qi, gi in hit.items():
                    if qi >= n_t:
                        centre = last[b, qi, :2] / model.extent
                        kept.append(_new_track(int(tg[b]["ids"][gi]), h_last[b, qi], centre))
                tracks[b] = kept
        total = total / clip_len
        opt.zero_grad(set_to_none=True)
        total.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        history["loss"].append(float(total.detach()))
        for key in stats:
            history[key].append(stats[key])
        history["cpu_s"].append(time.process_time() - cpu0)
        if callback is not None:
            callback(step, history["loss"][-1])
    model.eval()
    return history
