// Truss peeling on the GPU: per-edge triangle support and one frontier deletion step.
// Self-contained (CUDA headers only); launched from trussreg/kernels/truss.py through CuPy.

extern "C" {

// support[e] = number of w with (u,w) and (v,w) both alive, for every alive edge e = (u, v).
// The neighbour lists indices[indptr[x] : indptr[x+1]] are sorted; eid gives each entry's edge.
__global__ void edge_support(const long long* __restrict__ indptr,
                             const int* __restrict__ indices,
                             const int* __restrict__ eid,
                             const int* __restrict__ eu,
                             const int* __restrict__ ev,
                             const int* __restrict__ alive,
                             int* __restrict__ support,
                             int n_edges) {
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n_edges) return;
    if (!alive[e]) {
        support[e] = 0;
        return;
    }
    long long a = indptr[eu[e]];
    long long a_end = indptr[eu[e] + 1];
    long long b = indptr[ev[e]];
    long long b_end = indptr[ev[e] + 1];
    int count = 0;
    while (a < a_end && b < b_end) {
        int x = indices[a];
        int y = indices[b];
        if (x < y) {
            ++a;
        } else if (y < x) {
            ++b;
        } else {
            if (alive[eid[a]] && alive[eid[b]]) ++count;
            ++a;
            ++b;
        }
    }
    support[e] = count;
}

// Delete every alive edge with support <= k - 2 (it gets truss number k); count the deletions.
__global__ void peel_edges(const int* __restrict__ support,
                           int* __restrict__ alive,
                           int* __restrict__ tau,
                           int k,
                           int n_edges,
                           int* __restrict__ peeled) {
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n_edges) return;
    if (alive[e] && support[e] <= k - 2) {
        alive[e] = 0;
        tau[e] = k;
        atomicAdd(peeled, 1);
    }
}

}
