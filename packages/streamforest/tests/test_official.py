"""Agreement with the public memory code of the paper (``MemoryManager`` in
``llava/model/multimodal_projector/memory_manager.py`` of the StreamForest forks, e.g.
yeungyuandong/StreamForest). Not shipped here: point ``STREAMFOREST_OFFICIAL`` at that file.

With one attention head the public ToMe metric is the token itself; on the same float64 frames
the two must make the same event cuts and merges and return the same memory tokens.
"""

import importlib.util
import os
import time

import pytest

from streamforest import StreamForestMemory, make_event_stream

OFFICIAL = os.environ.get("STREAMFOREST_OFFICIAL", "")
pytestmark = pytest.mark.skipif(
    not os.path.isfile(OFFICIAL), reason="set STREAMFOREST_OFFICIAL to the public memory_manager.py"
)


def _official():
    spec = importlib.util.spec_from_file_location("official_memory_manager", OFFICIAL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.MemoryManager


@pytest.mark.parametrize(
    ("n0", "short", "n_long", "quota"), [(49, 16, 8, 256), (49, 16, 8, 1024), (64, 32, 16, 512)]
)
def test_same_memory_as_the_public_code(n0, short, n_long, quota):
    frames = make_event_stream(n_frames=600, tokens=n0, seed=3)[0].double()
    ref = _official()(
        frames.shape[-1],
        1,
        st_memory_windows=[1, 18],
        st_memory_tokens=[n0, short],
        event_split_window=8,
        long_memory_tokens_per_frame=n_long,
        long_memory_tokens_quota=quota,
    )
    ours = StreamForestMemory(1, 18, 8, short, n_long, quota)
    worst, seconds = 0.0, {"public": 0.0, "ours": 0.0}
    for frame in frames:
        start = time.perf_counter()
        ref.update(frame)
        expected = ref.get_memory_tokens()[0][0]
        seconds["public"] += time.perf_counter() - start
        start = time.perf_counter()
        ours.update(frame)
        tokens = ours.memory()[0]
        seconds["ours"] += time.perf_counter() - start
        assert [m.shape[0] for m in ref.memory_long] == [r.frames for r in ours.forest.roots]
        assert tokens.shape == expected.shape
        worst = max(worst, float((tokens - expected).abs().max()))
    assert worst == 0.0 and ours.forest.merges > 100
    print(
        f"\n{n0}/{short}/{n_long}/{quota}: max |diff| {worst:.1e}, {ours.forest.merges} merges, "
        f"ms/frame public {1e3 * seconds['public'] / 600:.2f}, "
        f"ours {1e3 * seconds['ours'] / 600:.2f}"
    )
