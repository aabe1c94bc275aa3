import pytest


@pytest.fixture(autouse=True)
def _one_blas_thread():
    """One BLAS/OpenMP thread per test: the tests' matrices are small, and several threads on a
    shared machine only add contention (the MLP baseline's fit ran 5x slower with them)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        yield
