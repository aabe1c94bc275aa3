import pytest
import torch._dynamo  # noqa: F401  (the first optimiser imports it; pay once, not in a timed test)

from bcvlr import BCVLRConfig


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    yield


@pytest.fixture
def tiny() -> BCVLRConfig:
    """The small preset with a handful of steps in every stage (for fast, exact checks)."""
    return BCVLRConfig.small().replace(
        ssl_steps=3,
        ssl_batch=8,
        lam_steps=3,
        lam_batch=8,
        policy_steps=3,
        policy_batch=8,
        idm_updates=2,
        decoder_updates=2,
        policy_updates=2,
        online_batch=8,
        num_envs=2,
        num_steps=4,
        seed_steps=4,
    )
