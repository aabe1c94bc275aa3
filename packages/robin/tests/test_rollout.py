import pytest
import torch

from paperkit.testing import assert_param_error
from robin import ROBIN, MGNDiffusion, MGNNextStep, robi_rollout, sequential_rollout


@pytest.fixture(scope="module")
def sim(beam):
    torch.manual_seed(0)
    s = ROBIN(latent=8, blocks_per_level=1, levels=2, num_steps=5)
    s.set_normalization(beam)
    return s.eval()


def _dirichlet_exact(traj, states):
    d = traj.dirichlet
    assert torch.equal(states[1:, d], traj.bc[1 : len(states), d])


def test_sequential_nfe_and_bcs(beam, sim):
    traj = beam[0]
    states, info = sequential_rollout(sim, traj, 6, generator=torch.Generator().manual_seed(0))
    assert states.shape == (7, *traj.u.shape[1:])
    assert info["nfe"] == 6 * 5  # T * K
    assert torch.equal(states[0], traj.u[0])
    _dirichlet_exact(traj, states)


@pytest.mark.parametrize("steps", [1, 3, 8])
def test_robi_calls_batches_and_levels(beam, sim, steps):
    traj = beam[1]
    K = sim.num_steps
    states, info = robi_rollout(sim, traj, steps, generator=torch.Generator().manual_seed(0))
    assert states.shape[0] == steps + 1
    assert info["nfe"] == steps + K - 1  # T + K - 1 batched calls
    assert max(info["batch_sizes"]) <= K
    assert info["levels"][0] == [K]  # start-up: one frame at K, then K-1, K; ...
    if steps >= K:
        assert info["levels"][1] == [K - 1, K]
        assert info["levels"][K - 1] == list(range(1, K + 1))  # steady state 1..K
    # every frame gets exactly K updates: the calls hold T*K frame-updates in all
    assert sum(info["batch_sizes"]) == steps * K
    _dirichlet_exact(traj, states)


def test_robi_window_smaller_than_k(beam, sim):
    traj = beam[2]
    states, info = robi_rollout(sim, traj, 8, window=1, generator=torch.Generator().manual_seed(0))
    assert info["nfe"] == 8 and max(info["batch_sizes"]) == 1 and info["levels"][0] == [5]
    _dirichlet_exact(traj, states)
    assert_param_error(robi_rollout, sim, traj, 4, window=6, param="window")
    assert_param_error(robi_rollout, sim, traj, 4, window=0, param="window")


def test_robi_with_one_frame_equals_sequential_ddpm(beam):
    """K = 1: the window holds one frame and ROBI is the sequential sampler, call for call."""
    torch.manual_seed(0)
    s = ROBIN(latent=8, blocks_per_level=1, levels=2, num_steps=1)
    s.set_normalization(beam)
    a, _ = sequential_rollout(s, beam[0], 5, generator=torch.Generator().manual_seed(3))
    b, _ = robi_rollout(s, beam[0], 5, generator=torch.Generator().manual_seed(3))
    assert torch.equal(a, b)


def test_deterministic_baselines_roll_out(beam):
    torch.manual_seed(0)
    m = MGNNextStep(latent=8, blocks=2)
    m.set_normalization(beam)
    states, info = sequential_rollout(m, beam[3], 5)
    assert info["nfe"] == 5
    _dirichlet_exact(beam[3], states)
    assert_param_error(robi_rollout, m, beam[3], 5, param="sim", exc=TypeError)
    d = MGNDiffusion(latent=8, blocks=2, num_steps=3)
    d.set_normalization(beam)
    assert robi_rollout(d, beam[3], 4)[1]["nfe"] == 4 + 3 - 1
    assert_param_error(sequential_rollout, d, beam[3], 9, param="steps")
