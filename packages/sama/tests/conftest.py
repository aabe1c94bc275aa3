import numpy as np
import pytest

from sama import Region, Turn, VideoRecord


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    yield


def line_mask(pixels, width=40, frames=1):
    """A (frames, 1, width) mask with the given pixel indices set in every frame."""
    m = np.zeros((frames, 1, width), bool)
    m[:, 0, list(pixels)] = True
    return m


def tiny_record(n_rounds=3, video_id="v0", T=2, H=4, W=4):
    """A record whose every turn is valid: one region, one grounded phrase."""
    frames = np.zeros((T, H, W, 3), np.uint8)
    m = np.zeros((T, H, W), bool)
    m[:, 1:3, 1:3] = True
    turns = [
        Turn(
            f"What is <mask> doing {k}?",
            f"The <p>red circle</p> [SEG] moves {k}.",
            [Region(m)],
            [m],
            question_id=k,
        )
        for k in range(n_rounds)
    ]
    return VideoRecord(video_id, frames, H, W, turns, "MeViS")
