import torch

from lion.data import bidirectional_copy, digits_images
from paperkit.testing import assert_param_error


def test_digits_images():
    x_train, y_train, x_test, y_test = digits_images(16)
    assert x_train.shape[1:] == (1, 16, 16) and x_test.shape[1:] == (1, 16, 16)
    assert len(x_train) + len(x_test) == 1797 and len(y_train) == len(x_train)
    assert x_train.min() >= 0 and x_train.max() <= 1
    assert set(y_test.tolist()) == set(range(10))
    x8 = digits_images(8)[0]
    assert x8.shape[1:] == (1, 8, 8)
    assert_param_error(digits_images, 4, param="upsample")
    assert_param_error(digits_images, 16, test_fraction=1.0, param="test_fraction")


def test_bidirectional_copy_labels_need_both_sides():
    tokens, labels = bidirectional_copy(64, 10, vocab=5, seed=1)
    assert tokens.shape == labels.shape == (64, 10)
    i = 4
    assert torch.equal(labels[:, i], (tokens[:, i - 1] + tokens[:, i + 1]) % 5)
    assert torch.equal(labels[:, 0], tokens[:, 1] % 5)  # x_{-1} = 0
    assert torch.equal(labels[:, -1], tokens[:, -2] % 5)  # x_N = 0
    again, _ = bidirectional_copy(64, 10, vocab=5, seed=1)
    assert torch.equal(tokens, again)
    # the right neighbour alone does not determine the label: the left one matters too
    assert len(set(labels[tokens[:, i + 1] == 0, i].tolist())) > 1
    assert_param_error(bidirectional_copy, 4, 1, param="N")
    assert_param_error(bidirectional_copy, 4, 8, vocab=1, param="vocab")
