import numpy as np
import torch

from paperkit.testing import assert_close, assert_param_error
from robin import make_bending_beam_dataset, rollout_rmse
from robin.data import ACTUATOR, CLAMPED, plane_strain_stiffness


def test_fem_solution_is_in_equilibrium(beam):
    traj = beam[0]
    pos, cells = traj.mesh.pos.double().numpy(), traj.mesh.cells.numpy()
    K = plane_strain_stiffness(pos, cells)
    n = pos.shape[0]
    # rigid translations and the infinitesimal rotation carry no strain energy
    rot = np.stack([-pos[:, 1], pos[:, 0]], 1).ravel()
    for mode in (np.tile([1.0, 0.0], n), np.tile([0.0, 1.0], n), rot):
        assert np.abs(K @ mode).max() < 1e-10
    free = np.repeat(traj.node_type.numpy() == 0, 2)
    u = traj.u.double().numpy().reshape(traj.u.shape[0], -1)
    residual = (K @ u.T)[free]  # zero force at every free node (float32 storage)
    assert np.abs(residual).max() < 1e-5 * np.abs(K).max() * np.abs(u).max() * 10


def test_boundary_conditions_and_bending(beam):
    for traj in beam:
        t = traj.node_type
        assert (t == CLAMPED).sum() == 4 and (t == ACTUATOR).sum() == 3
        assert torch.equal(traj.u[:, t != 0], traj.bc[:, t != 0])
        assert traj.u[0].abs().max() == 0 and traj.u[-1].abs().max() > 0
    # the actuator bends the whole beam: nodes far from the patch move
    far = beam[0].mesh.pos[:, 0] < 3.0
    assert beam[0].u[-1, far & (beam[0].node_type == 0)].abs().max() > 1e-3


def test_dataset_is_seeded_and_checked():
    a = make_bending_beam_dataset(2, 3, nx=10, ny=3, seed=5)
    b = make_bending_beam_dataset(2, 3, nx=10, ny=3, seed=5)
    assert torch.equal(a[1].u, b[1].u)
    assert_param_error(make_bending_beam_dataset, 0, 3, param="n_traj")
    assert_param_error(make_bending_beam_dataset, 2, 0, param="steps")


def test_rollout_rmse_by_hand():
    true = torch.zeros(2, 3, 2)
    pred = torch.zeros(2, 3, 2)
    pred[1, 0, 0] = 6.0  # one error of 6 in 12 entries, the last step's 6 entries
    got = rollout_rmse(pred, true)
    assert_close(got["rmse_all"], np.sqrt(36 / 12), rtol=1e-12, atol=0)
    assert_close(got["rmse_last"], np.sqrt(36 / 6), rtol=1e-12, atol=0)
