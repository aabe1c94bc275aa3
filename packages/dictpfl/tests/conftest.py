import pytest
import torch

from dictpfl import Federation, HEContext, make_federated_digits, pretrained_mlp


@pytest.fixture(autouse=True, scope="session")
def one_thread():
    """The tests' tensors are tiny: torch's intra-op threads only add contention."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def he():
    return HEContext.create()


@pytest.fixture(scope="session")
def federation():
    """One server and two client processes, shared by every federated test (start-up once)."""
    with Federation(2) as fed:
        yield fed


@pytest.fixture(scope="session")
def ref_data():
    """The reference setting's data (digits, Dirichlet(0.5)), split over 2 clients."""
    return make_federated_digits(clients=2, seed=0)


@pytest.fixture(scope="session")
def ref_model(ref_data):
    """The card's MLP 64-256-256 pretrained on the public split (few epochs), new head."""
    return pretrained_mlp(ref_data, (256, 256), epochs=5, seed=0)
