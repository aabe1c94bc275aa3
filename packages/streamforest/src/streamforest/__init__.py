"""StreamForest: persistent event memory for streaming video (Zeng et al., NeurIPS 2025,
arXiv 2509.24871), as reusable torch code.

A streaming video model must answer at any moment from a bounded number of visual tokens. The
Fine-grained Spatiotemporal Window keeps the current frame at full resolution and a short window
of recent frames at reduced token counts, cutting events at similarity minima; the Persistent
Event Memory Forest stores older events and, over its token quota, merges the adjacent pair with
the smallest penalty (content similarity, temporal distance, merge frequency), so memory degrades
into event-level trees.

>>> import torch
>>> from streamforest import StreamForestMemory
>>> _ = torch.manual_seed(0)
>>> mem = StreamForestMemory(short_frames=4, split_window=2, short_tokens=8,
...                          tokens_per_frame=2, quota=16)
>>> for t in range(50):
...     mem.update(torch.randn(16, 4))
>>> tokens, spans = mem.memory()
>>> tokens.shape[1], mem.forest.num_tokens <= 16
(4, True)

The public names are imported on first use (importing ``streamforest`` imports no torch).
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "EventNode": "forest",
        "FIFOMemory": "baselines",
        "FineGrainedWindow": "window",
        "GlobalToMeMemory": "baselines",
        "PersistentEventMemoryForest": "forest",
        "StreamForestMemory": "memory",
        "UniformMemory": "baselines",
        "bipartite_soft_matching": "tome",
        "cross_event_similarity": "tome",
        "evaluate_memory": "evaluation",
        "event_similarity": "tome",
        "fit_probe": "evaluation",
        "make_event_stream": "streams",
        "merge_to": "tome",
        "merge_wavg": "tome",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from streamforest.baselines import FIFOMemory as FIFOMemory
    from streamforest.baselines import GlobalToMeMemory as GlobalToMeMemory
    from streamforest.baselines import UniformMemory as UniformMemory
    from streamforest.evaluation import evaluate_memory as evaluate_memory
    from streamforest.evaluation import fit_probe as fit_probe
    from streamforest.forest import EventNode as EventNode
    from streamforest.forest import PersistentEventMemoryForest as PersistentEventMemoryForest
    from streamforest.memory import StreamForestMemory as StreamForestMemory
    from streamforest.streams import make_event_stream as make_event_stream
    from streamforest.tome import bipartite_soft_matching as bipartite_soft_matching
    from streamforest.tome import cross_event_similarity as cross_event_similarity
    from streamforest.tome import event_similarity as event_similarity
    from streamforest.tome import merge_to as merge_to
    from streamforest.tome import merge_wavg as merge_wavg
    from streamforest.window import FineGrainedWindow as FineGrainedWindow
