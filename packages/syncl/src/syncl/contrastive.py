"""Instance-aware Contrastive Learning (the paper's Sec. 3).

Track queries are pulled towards the C-decoder object queries assigned to the same instance and
pushed away from the other assigned object queries and the other track queries, bridging the
representations of detection (object queries) and tracking (track queries).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from paperkit import check_choice, check_real, check_tensor, param_error

__all__ = ["instance_contrastive_loss"]


def instance_contrastive_loss(
    track_emb: torch.Tensor,
    track_ids: torch.Tensor,
    obj_emb: torch.Tensor,
    obj_ids: torch.Tensor,
    tau: float = 0.1,
    kernel: str = "cosine",
) -> torch.Tensor:
    """InfoNCE over instances. For track query i with identity g_i, the positives P_i are the
    object queries with identity g_i and the negatives N_i the other object queries and the
    other track queries:

        L = -mean_i log( sum_{p in P_i} exp(s(e_i, e_p) / tau)
                         / sum_{a in P_i u N_i} exp(s(e_i, e_a) / tau) )

    with ``s`` the cosine similarity (``kernel="cosine"``) or ``s(x, y) = -|x - y|^2``
    (``kernel="rbf"``, the log of a Gaussian kernel). Tracks without positives are skipped; the
    loss is 0 (with a gradient path) when no track has one.

    Args:
        track_emb: (T, d) track-query embeddings; track_ids: (T,) their identities (>= 0).
        obj_emb: (P, d) object-query embeddings; obj_ids: (P,) their assigned identities.
        tau: temperature > 0. kernel: ``"cosine"`` or ``"rbf"``.
    """
    owner = "instance_contrastive_loss"
    dims: dict = {}
    check_tensor("track_emb", owner, track_emb, shape=("T", "d"), dims=dims)
    check_tensor("track_ids", owner, track_ids, shape=("T",), dims=dims, dtype="int")
    check_tensor("obj_emb", owner, obj_emb, shape=("P", "d"), dims=dims)
    check_tensor("obj_ids", owner, obj_ids, shape=("P",), dims=dims, dtype="int")
    if obj_emb.dtype != track_emb.dtype:
        raise param_error(
            "obj_emb",
            owner,
            f"of dtype {track_emb.dtype} (as track_emb)",
            obj_emb.dtype,
            cls=TypeError,
        )
    for name, ids in (("track_ids", track_ids), ("obj_ids", obj_ids)):
        if ids.numel() and int(ids.min()) < 0:
            raise param_error(name, owner, "non-negative identities", int(ids.min()))
    tau = check_real("tau", owner, tau, low=0, low_open=True)
    kernel = check_choice("kernel", owner, kernel, ("cosine", "rbf"))
    anchors = torch.cat([obj_emb, track_emb], dim=0)  # object queries first, then the tracks
    if kernel == "cosine":
        sim = F.normalize(track_emb, dim=-1) @ F.normalize(anchors, dim=-1).T
    else:
        sim = -torch.cdist(track_emb, anchors).pow(2)
    T, P = track_emb.shape[0], obj_emb.shape[0]
    positive = torch.zeros(T, P + T, dtype=torch.bool, device=track_emb.device)
    positive[:, :P] = track_ids[:, None] == obj_ids[None, :]
    valid = torch.ones_like(positive)
    valid[:, P:] = ~torch.eye(T, dtype=torch.bool, device=track_emb.device)  # not itself
    has_pos = positive.any(dim=1)
    if not bool(has_pos.any()):
        return track_emb.sum() * 0.0
    logits = sim / tau
    neg_inf = torch.finfo(logits.dtype).min
    log_all = torch.logsumexp(logits.masked_fill(~valid, neg_inf), dim=1)
    log_pos = torch.logsumexp(logits.masked_fill(~positive, neg_inf), dim=1)
    return (log_all - log_pos)[has_pos].mean()
