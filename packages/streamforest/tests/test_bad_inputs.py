"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range values listed in ``bad``)."""

import numpy as np
import torch

import streamforest
from paperkit.testing import BadInputs, Call, fresh
from streamforest import (
    FIFOMemory,
    FineGrainedWindow,
    GlobalToMeMemory,
    PersistentEventMemoryForest,
    StreamForestMemory,
    UniformMemory,
)

N, C = 12, 5
WIN = {"now_frames": 1, "short_frames": 3, "split_window": 2, "short_tokens": 6}
LONG = {"tokens_per_frame": 3}
FRAME = torch.randn(N, C, generator=torch.Generator().manual_seed(0))
WRONG_FRAMES = [torch.randn(N + 1, C), torch.randn(N, C + 1)]
EVENT = torch.randn(2, 6, C, generator=torch.Generator().manual_seed(1))
X = torch.randn(2, 10, C, generator=torch.Generator().manual_seed(2))
HUGE = 10**9
STREAM = streamforest.make_event_stream(
    n_frames=30, n_event_types=3, tokens=N, dim=C, event_len=(3, 8), seed=1
)
CENTROIDS = torch.randn(3, C, dtype=torch.float64)


def _pushed(obj):
    obj.update(FRAME) if hasattr(obj, "update") else obj.push(FRAME)


def _two_events(forest):
    forest.add_event(EVENT, 0, 1)
    forest.add_event(EVENT, 2, 3)


def _memory_calls(cls, first, **init):
    """The constructor with its bad values, and update() on a fresh and on a used memory."""
    name = cls.__name__
    common = {**WIN, **LONG, **init}
    return [
        Call(
            cls,
            name=f"{name}.update",
            method="update",
            call={"frame": FRAME},
            bad={first: [1, -3], "short_tokens": [2], "now_frames": [-1], "split_window": [0]},
            **common,
        ),
        Call(
            cls,
            name=f"{name}.update-second",
            method="update",
            prepare=_pushed,
            call={"frame": FRAME},
            bad={"frame": WRONG_FRAMES},
            **common,
        ),
    ]


SUITE = BadInputs(
    streamforest,
    [
        Call(
            streamforest.merge_to,
            x=X,
            target=4,
            size=torch.ones(2, 10, 1),
            shapes={"x": "B N C", "size": "B N 1"},
            bad={"target": [0, 11]},
        ),
        Call(streamforest.bipartite_soft_matching, metric=X, r=3, bad={"r": [-1]}),
        Call(
            streamforest.merge_wavg,
            merge=streamforest.bipartite_soft_matching(X, 2),
            x=X,
            size=torch.ones(2, 10, 1),
            shapes={"x": "B N C", "size": "B N 1"},
            bad={"merge": [3], "size": [torch.zeros(2, 10, 1)]},
        ),
        Call(
            streamforest.event_similarity,
            a=EVENT,
            b=EVENT[:1],
            n_long=3,
            shapes={"a": "T n C", "b": "S n C"},
            bad={"n_long": [0, 7]},
        ),
        Call(
            streamforest.cross_event_similarity,
            a=EVENT,
            b=EVENT[:1],
            n_long=3,
            shapes={"a": "T n C", "b": "S n C"},
            bad={"n_long": [0, 7]},
        ),
        Call(
            PersistentEventMemoryForest,
            name="Forest.add_event",
            method="add_event",
            call={"tokens": EVENT, "t_start": 0, "t_end": 1},
            tokens_per_frame=3,
            quota=12,
            w_sim=0.4,
            w_time=0.2,
            w_merge=0.4,
            similarity="tome",
            bad={
                "tokens_per_frame": [0],
                "quota": [2, -1],
                "w_sim": [-0.1],
                "w_time": [-1.0],
                "w_merge": [-0.5],
                "t_start": [-1],
            },
        ),
        Call(
            PersistentEventMemoryForest,
            name="Forest.add_event-second",
            method="add_event",
            prepare=_two_events,
            call={"tokens": EVENT, "t_start": 4, "t_end": 5},
            tokens_per_frame=3,
            bad={"tokens": [EVENT[..., :-1]], "t_start": [3], "t_end": [3]},
        ),
        Call(
            PersistentEventMemoryForest,
            name="Forest.penalties",
            method="penalties",
            prepare=_two_events,
            call={"t_now": 5.0},
            tokens_per_frame=3,
            bad={"t_now": [0.0, -1.0]},
        ),
        Call(
            PersistentEventMemoryForest,
            name="Forest.consolidate",
            method="consolidate",
            prepare=_two_events,
            call={"t_now": 5.0},
            tokens_per_frame=3,
            quota=6,
            bad={"t_now": [0.0]},
        ),
        Call(
            FineGrainedWindow,
            name="FineGrainedWindow.push",
            method="push",
            call={"frame": FRAME},
            bad={
                "short_tokens": [0],
                "now_frames": [-1],
                "short_frames": [-1],
                "split_window": [0],
                "frame": [torch.randn(3, C)],
            },
            **WIN,
        ),
        Call(
            FineGrainedWindow,
            name="FineGrainedWindow.push-second",
            method="push",
            prepare=_pushed,
            call={"frame": FRAME},
            bad={"frame": WRONG_FRAMES},
            **WIN,
        ),
        *_memory_calls(
            StreamForestMemory,
            "quota",
            quota=12,
            w_sim=0.4,
            w_time=0.2,
            w_merge=0.4,
            similarity="cross",
        ),
        *_memory_calls(FIFOMemory, "budget", budget=12),
        *_memory_calls(UniformMemory, "budget", budget=12),
        *_memory_calls(GlobalToMeMemory, "budget", budget=12),
        Call(
            streamforest.make_event_stream,
            n_frames=20,
            n_event_types=3,
            tokens=8,
            dim=8,
            event_len=(2, 5),
            noise=0.3,
            detail_tokens=2,
            seed=0,
            types_seed=0,
            bad={
                "n_frames": [0, HUGE],
                "n_event_types": [1],
                "tokens": [0],
                "dim": [4],
                "event_len": [(0, 3), (5, 2), (1, 2, 3)],
                "noise": [-0.1],
                "detail_tokens": [9],
                "seed": [-1],
                "types_seed": [-1],
            },
        ),
        Call(
            streamforest.fit_probe,
            frames=STREAM[0],
            event_type=STREAM[1],
            n_types=3,
            shapes={"frames": "T N C", "event_type": "T"},
            bad={"n_types": [0], "event_type": [torch.full((30,), 3)]},
        ),
        Call(
            streamforest.evaluate_memory,
            memory=fresh(lambda: StreamForestMemory(quota=12, **WIN, **LONG)),
            stream=STREAM,
            queries=np.array([5, 10, 29]),
            centroids=CENTROIDS,
            age_bins=[1, 5, 10],
            shapes={"centroids": "K C"},
            bad={
                "memory": [object()],
                "stream": [STREAM[:2], "frames"],
                "queries": [np.array([0, 5]), np.array([5, 30]), np.array([10, 5])],
                "centroids": [CENTROIDS[:, :-1]],
                "age_bins": [[0, 5], [5, 1]],
            },
        ),
    ],
    exempt={"EventNode": "a record built by PersistentEventMemoryForest from checked tokens"},
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
