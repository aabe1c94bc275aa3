import pytest

from hbp.cost import CostModel


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    yield


@pytest.fixture
def token_cost():
    """A cost model whose pack time is its token count (c_lin = 1, nothing else)."""
    return CostModel(
        c_lin=1.0,
        c_attn=0.0,
        c_comm=0.0,
        c_fix=0.0,
        m_tok=1.0,
        m_static=0.0,
        m_ckpt=0.5,
        device_mem=1e12,
    )


@pytest.fixture
def preset():
    return CostModel.preset("8b")
