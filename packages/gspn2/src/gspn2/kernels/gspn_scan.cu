// GSPN line-scan propagation: the fused single-launch kernels (GSPN-2) and the per-line
// multi-launch baseline (GSPN-1 style), forward and backward. Launched through CuPy by
// gspn2/kernels/fused.py and gspn2/kernels/multilaunch.py.
//
// Layout (row-major, every tensor contiguous):
//   x, lam, h, grad_h, grad_x, grad_lam : [ND][C][L][S]   (ND = batch x directions of the set)
//   w_m, w_0, w_p, grad_w*              : [ND][G][L][S]   (G divides C; channel c uses c / (C/G))
// The scan runs over the L lines (columns), a line holds S contiguous pixels, so a line load is
// coalesced. Direction slot d = nd % D scans backwards (l = L-1-t) when bit d of rev_mask is set.
// Step t of the scan:
//   h_t[s] = lam_t[s] x_t[s] + w_m[s] h_{t-1}[s-1] + w_0[s] h_{t-1}[s] + w_p[s] h_{t-1}[s+1]
// (out-of-range neighbours are 0; h_{t-1} = 0 when t % chunk == 0).
// Backward (adjoint scan, reverse order):
//   g_t = dL/dh_t + W_{t+1}^T g_{t+1},  (W^T g)[s] = w_m[s+1] g[s+1] + w_0[s] g[s] + w_p[s-1] g[s-1]
//   dx_t = lam_t g_t, dlam_t = x_t g_t, dw_m[s] += g_t[s] h_{t-1}[s-1] (likewise w_0, w_p),
// the weight gradients reduced over the channels of a group with fp32 atomicAdd.
// Storage types: float, and 16-bit halves / bfloat16 held as raw bits (converted with PTX), so
// the file needs no CUDA header under NVRTC or nvcc. Accumulation is always fp32.

struct f16_t {
  unsigned short bits;
};
struct bf16_t {
  unsigned short bits;
};

__device__ __forceinline__ float load(const float* p, long long i) { return p[i]; }
__device__ __forceinline__ float load(const f16_t* p, long long i) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(p[i].bits));
  return f;
}
__device__ __forceinline__ float load(const bf16_t* p, long long i) {
  return __uint_as_float(static_cast<unsigned int>(p[i].bits) << 16);
}
__device__ __forceinline__ void store(float* p, long long i, float v) { p[i] = v; }
__device__ __forceinline__ void store(f16_t* p, long long i, float v) {
  unsigned short b;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(b) : "f"(v));
  p[i].bits = b;
}
// float -> bfloat16, round to nearest even (NaN kept quiet); portable to every architecture.
__device__ __forceinline__ void store(bf16_t* p, long long i, float v) {
  unsigned int u = __float_as_uint(v);
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    p[i].bits = static_cast<unsigned short>((u >> 16) | 0x40u);
    return;
  }
  u += 0x7fffu + ((u >> 16) & 1u);
  p[i].bits = static_cast<unsigned short>(u >> 16);
}

// Synchronise the threads of a block that stages one line in shared memory.
__device__ __forceinline__ void line_sync() {
  if (blockDim.x <= 32) {
    __syncwarp();
  } else {
    __syncthreads();
  }
}

// One output pixel of the forward step, given the previous line's three neighbours.
template <typename T>
__device__ __forceinline__ float fwd_pixel(const T* x, const T* wm, const T* w0, const T* wp,
                                           const T* lam, long long xo, long long wo, bool restart,
                                           float pm, float p0, float pp) {
  float acc = load(lam, xo) * load(x, xo);
  if (!restart) {
    acc += load(wm, wo) * pm + load(w0, wo) * p0 + load(wp, wo) * pp;
  }
  return acc;
}

// g_t at one pixel: the incoming gradient plus the transposed propagation of g_{t+1}.
// wn is the offset of pixel s on the next line in the weight tensors; nm, n0, np are
// g_{t+1}[s-1], g_{t+1}[s], g_{t+1}[s+1] (0 when out of range).
template <typename T>
__device__ __forceinline__ float adjoint_pixel(const T* wm, const T* w0, const T* wp,
                                               float grad, bool has_next, long long wn, int s,
                                               int S, float nm, float n0, float np) {
  float g = grad;
  if (has_next) {
    g += load(w0, wn) * n0;
    if (s + 1 < S) g += load(wm, wn + 1) * np;
    if (s > 0) g += load(wp, wn - 1) * nm;
  }
  return g;
}

// The gradients of step t at one pixel, given g_t there and the forward state of the previous
// line (hm, h0, hp = h_{t-1}[s-1], h_{t-1}[s], h_{t-1}[s+1]).
template <typename T>
__device__ __forceinline__ void grads_pixel(const T* x, const T* lam, T* gx, T* glam, float* gwm,
                                            float* gw0, float* gwp, long long xo, long long wo,
                                            float g, bool restart, float hm, float h0, float hp) {
  store(gx, xo, load(lam, xo) * g);
  store(glam, xo, load(x, xo) * g);
  if (!restart) {
    atomicAdd(gwm + wo, g * hm);
    atomicAdd(gw0 + wo, g * h0);
    atomicAdd(gwp + wo, g * hp);
  }
}

// Fused forward: one block per (nd, channel); its threads cover the S pixels of a line and the
// block loops over the L lines, keeping the previous line in shared memory (2 x S floats).
template <typename T>
__global__ void gspn_fwd(const T* x, const T* wm, const T* w0, const T* wp, const T* lam, T* h,
                         int D, int C, int G, int L, int S, int chunk, int rev_mask) {
  extern __shared__ float line[];
  const int c = blockIdx.x;
  const int nd = blockIdx.y;
  const bool rev = (rev_mask >> (nd % D)) & 1;
  const long long xbase = (static_cast<long long>(nd) * C + c) * L * S;
  const long long wbase = (static_cast<long long>(nd) * G + c / (C / G)) * L * S;
  for (int t = 0; t < L; ++t) {
    const int l = rev ? L - 1 - t : t;
    const bool restart = (t % chunk) == 0;
    const float* prev = line + (t & 1) * S;
    float* cur = line + ((t + 1) & 1) * S;
    for (int s = threadIdx.x; s < S; s += blockDim.x) {
      const long long off = static_cast<long long>(l) * S + s;
      const float pm = (!restart && s > 0) ? prev[s - 1] : 0.f;
      const float p0 = restart ? 0.f : prev[s];
      const float pp = (!restart && s + 1 < S) ? prev[s + 1] : 0.f;
      const float v = fwd_pixel(x, wm, w0, wp, lam, xbase + off, wbase + off, restart, pm, p0, pp);
      cur[s] = v;
      store(h, xbase + off, v);
    }
    line_sync();
  }
}

// Fused backward: the mirror kernel, scanning the lines in reverse with g_{t+1} in shared memory.
template <typename T>
__global__ void gspn_bwd(const T* x, const T* wm, const T* w0, const T* wp, const T* lam,
                         const T* h, const T* gh, T* gx, T* glam, float* gwm, float* gw0,
                         float* gwp, int D, int C, int G, int L, int S, int chunk, int rev_mask) {
  extern __shared__ float line[];
  const int c = blockIdx.x;
  const int nd = blockIdx.y;
  const bool rev = (rev_mask >> (nd % D)) & 1;
  const long long xbase = (static_cast<long long>(nd) * C + c) * L * S;
  const long long wbase = (static_cast<long long>(nd) * G + c / (C / G)) * L * S;
  for (int t = L - 1; t >= 0; --t) {
    const int l = rev ? L - 1 - t : t;
    const int lnext = rev ? l - 1 : l + 1;
    const int lprev = rev ? l + 1 : l - 1;
    const bool has_next = (t + 1 < L) && ((t + 1) % chunk != 0);
    const bool restart = (t % chunk) == 0;
    const float* next = line + ((t + 1) & 1) * S;
    float* cur = line + (t & 1) * S;
    for (int s = threadIdx.x; s < S; s += blockDim.x) {
      const long long off = static_cast<long long>(l) * S + s;
      const long long wn = static_cast<long long>(lnext) * S + s;
      const float nm = (has_next && s > 0) ? next[s - 1] : 0.f;
      const float n0 = has_next ? next[s] : 0.f;
      const float np = (has_next && s + 1 < S) ? next[s + 1] : 0.f;
      const float g = adjoint_pixel(wm, w0, wp, load(gh, xbase + off), has_next, wbase + wn, s, S,
                                    nm, n0, np);
      cur[s] = g;
      float hm = 0.f, h0 = 0.f, hp = 0.f;
      if (!restart) {
        const long long po = xbase + static_cast<long long>(lprev) * S + s;
        h0 = load(h, po);
        if (s > 0) hm = load(h, po - 1);
        if (s + 1 < S) hp = load(h, po + 1);
      }
      grads_pixel(x, lam, gx, glam, gwm, gw0, gwp, xbase + off, wbase + off, g, restart, hm, h0,
                  hp);
    }
    line_sync();
  }
}

// Multi-launch baseline, forward: one launch per scan step t, one thread per (nd, c, s); the
// previous line is read back from h in global memory, as GSPN-1's per-column kernel does.
template <typename T>
__global__ void gspn_fwd_step(const T* x, const T* wm, const T* w0, const T* wp, const T* lam,
                              T* h, int ND, int D, int C, int G, int L, int S, int chunk,
                              int rev_mask, int t) {
  const long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= static_cast<long long>(ND) * C * S) return;
  const int s = static_cast<int>(idx % S);
  const long long row = idx / S;
  const int c = static_cast<int>(row % C);
  const int nd = static_cast<int>(row / C);
  const bool rev = (rev_mask >> (nd % D)) & 1;
  const int l = rev ? L - 1 - t : t;
  const int lprev = rev ? l + 1 : l - 1;
  const bool restart = (t % chunk) == 0;
  const long long xbase = (static_cast<long long>(nd) * C + c) * L * S;
  const long long wbase = (static_cast<long long>(nd) * G + c / (C / G)) * L * S;
  const long long off = static_cast<long long>(l) * S + s;
  float pm = 0.f, p0 = 0.f, pp = 0.f;
  if (!restart) {
    const long long po = xbase + static_cast<long long>(lprev) * S + s;
    p0 = load(h, po);
    if (s > 0) pm = load(h, po - 1);
    if (s + 1 < S) pp = load(h, po + 1);
  }
  store(h, xbase + off,
        fwd_pixel(x, wm, w0, wp, lam, xbase + off, wbase + off, restart, pm, p0, pp));
}

// Multi-launch baseline, backward: one launch per step t (in reverse); g_{t+1} is read back from
// the fp32 buffer g [ND][C][L][S] written by the previous launch.
template <typename T>
__global__ void gspn_bwd_step(const T* x, const T* wm, const T* w0, const T* wp, const T* lam,
                              const T* h, const T* gh, T* gx, T* glam, float* gwm, float* gw0,
                              float* gwp, float* gbuf, int ND, int D, int C, int G, int L, int S,
                              int chunk, int rev_mask, int t) {
  const long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= static_cast<long long>(ND) * C * S) return;
  const int s = static_cast<int>(idx % S);
  const long long row = idx / S;
  const int c = static_cast<int>(row % C);
  const int nd = static_cast<int>(row / C);
  const bool rev = (rev_mask >> (nd % D)) & 1;
  const int l = rev ? L - 1 - t : t;
  const int lnext = rev ? l - 1 : l + 1;
  const int lprev = rev ? l + 1 : l - 1;
  const bool has_next = (t + 1 < L) && ((t + 1) % chunk != 0);
  const bool restart = (t % chunk) == 0;
  const long long xbase = (static_cast<long long>(nd) * C + c) * L * S;
  const long long wbase = (static_cast<long long>(nd) * G + c / (C / G)) * L * S;
  const long long off = static_cast<long long>(l) * S + s;
  const long long wn = static_cast<long long>(lnext) * S + s;
  float nm = 0.f, n0 = 0.f, np = 0.f;
  if (has_next) {
    n0 = gbuf[xbase + wn];
    if (s > 0) nm = gbuf[xbase + wn - 1];
    if (s + 1 < S) np = gbuf[xbase + wn + 1];
  }
  const float g =
      adjoint_pixel(wm, w0, wp, load(gh, xbase + off), has_next, wbase + wn, s, S, nm, n0, np);
  gbuf[xbase + off] = g;
  float hm = 0.f, h0 = 0.f, hp = 0.f;
  if (!restart) {
    const long long po = xbase + static_cast<long long>(lprev) * S + s;
    h0 = load(h, po);
    if (s > 0) hm = load(h, po - 1);
    if (s + 1 < S) hp = load(h, po + 1);
  }
  grads_pixel(x, lam, gx, glam, gwm, gw0, gwp, xbase + off, wbase + off, g, restart, hm, h0, hp);
}

// Explicit instantiations (the names CuPy looks up: gspn_fwd<float>, gspn_fwd<f16_t>, ...), so
// that an nvcc compile of this file builds every kernel.
#define GSPN_INSTANTIATE(T)                                                                      \
  template __global__ void gspn_fwd<T>(const T*, const T*, const T*, const T*, const T*, T*,     \
                                       int, int, int, int, int, int, int);                      \
  template __global__ void gspn_bwd<T>(const T*, const T*, const T*, const T*, const T*,         \
                                       const T*, const T*, T*, T*, float*, float*, float*, int,  \
                                       int, int, int, int, int, int);                            \
  template __global__ void gspn_fwd_step<T>(const T*, const T*, const T*, const T*, const T*,    \
                                            T*, int, int, int, int, int, int, int, int, int);    \
  template __global__ void gspn_bwd_step<T>(const T*, const T*, const T*, const T*, const T*,    \
                                            const T*, const T*, T*, T*, float*, float*, float*,  \
                                            float*, int, int, int, int, int, int, int, int, int);

GSPN_INSTANTIATE(float)
GSPN_INSTANTIATE(f16_t)
GSPN_INSTANTIATE(bf16_t)
