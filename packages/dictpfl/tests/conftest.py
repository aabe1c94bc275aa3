import pytest

from dictpfl import HEContext, make_federated_digits, pretrained_mlp


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    yield


@pytest.fixture(scope="session")
def he():
    """The reference CKKS context (N = 8192, [60, 40, 40, 60], 2^40), with its secret key."""
    return HEContext.create()


@pytest.fixture(scope="session")
def ref_data():
    """The reference setting's data (digits, Dirichlet(0.5)), split over 2 clients."""
    return make_federated_digits(clients=2, seed=0)


@pytest.fixture(scope="session")
def ref_model(ref_data):
    """The reference MLP 64-256-256 pretrained on the public split (few epochs), new head."""
    return pretrained_mlp(ref_data, (256, 256), epochs=5, seed=0)
