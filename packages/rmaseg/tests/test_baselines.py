import numpy as np
import torch

from paperkit.testing import assert_param_error
from rmaseg import argmax_predict, threshold_predict


def test_argmax_and_threshold(random_probs):
    probs = random_probs(2, 3, 4, 5, softmax=True)
    labels = argmax_predict(probs)
    assert labels.shape == (2, 4, 5) and labels.dtype == torch.int64
    assert torch.equal(probs.gather(1, labels.unsqueeze(1)).squeeze(1), probs.amax(1))
    ties = argmax_predict(torch.full((1, 3, 2), 1 / 3))
    assert torch.equal(ties, torch.zeros(1, 2, dtype=torch.int64))  # lowest index
    masks = threshold_predict(probs.numpy(), thr=0.4)
    assert isinstance(masks, np.ndarray) and np.array_equal(masks, probs.numpy() > 0.4)
    assert not threshold_predict(torch.full((1, 1, 3), 0.5)).any()  # strict
    assert_param_error(threshold_predict, probs, thr=2.0, param="thr")
    assert_param_error(argmax_predict, probs[0, 0], param="probs")
