r"""The Gaussian-process detection head (paper Sec. 3, "GP detection head").

A whitened sparse variational GP (Titsias 2009; Hensman et al. 2015) on the features
:math:`\phi=\mathrm{LayerNorm}(Wh+b)\in\mathbb{R}^p` of each query output :math:`h`, with M
learned inducing inputs :math:`Z` and the RBF kernel
:math:`k(a,b)=s_f^2\exp(-\lVert a-b\rVert^2/2\ell^2)`. Per output o,
:math:`q(v_o)=\mathcal{N}(m_o, L_oL_o^\top)` and :math:`u_o=L_{zz}v_o` with
:math:`L_{zz}=\mathrm{chol}(K_{zz}+\epsilon I)`. With :math:`A=K_{xz}L_{zz}^{-\top}`:

.. math:: \mu_o(x)=A m_o,\qquad
          \sigma^2_o(x)=k(x,x)-\lVert A\rVert^2_{\text{row}}+\lVert AL_o\rVert^2_{\text{row}}
          +s_{n,o}^2,

and :math:`\mathrm{KL}(q(v_o)\,\|\,\mathcal{N}(0,I))=\tfrac12(\mathrm{tr}S_o+m_o^\top m_o-M
-\log\det S_o)`. When :math:`Z` are the training inputs and :math:`q(u)` is the exact posterior,
:math:`\mu,\sigma^2` equal the exact GP posterior predictive (tested in float64).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from paperkit import check_choice, check_int, check_real, check_tensor, param_error
from zrdetr.zoom import check_dtype

__all__ = ["SVGPHead", "gaussian_nll"]


class SVGPHead(nn.Module):
    r"""Whitened SVGP head, (B, Q, in_dim) -> (mean (B, Q, out_dim), var (B, Q, out_dim)).

    Args:
        in_dim: width of the query outputs h.
        out_dim: number of independent GP outputs (4 box deltas + K + 1 class logits).
        n_inducing: M inducing inputs (paper: 32).
        feat_dim: p, the GP input width after Linear + LayerNorm (16).
        jitter: added to the diagonal of :math:`K_{zz}` before its Cholesky factor; None:
            1e-4 in float32, 1e-10 in float64.
        mean_function: the GP's prior mean, ``"zero"`` (paper Sec. 3 as written) or
            ``"linear"`` (:math:`\mu_o(x)` gains :math:`w_o^\top x+c_o`, zero-initialised, the
            usual choice in deep-kernel SVGPs; the variance is unchanged).

    Parameters: ``inducing`` (M, p), ``log_lengthscale``, ``log_outputscale`` (scalars),
    ``log_noise`` (out_dim,), ``variational_mean`` (out_dim, M), ``variational_chol``
    (out_dim, M, M; its lower triangle is :math:`L_o`).
    """

    def __init__(
        self,
        in_dim: int,
        out_dim: int,
        n_inducing: int = 32,
        feat_dim: int = 16,
        jitter: float | None = None,
        mean_function: str = "linear",
    ) -> None:
        super().__init__()
        owner = "SVGPHead"
        self.mean_function = check_choice("mean_function", owner, mean_function, ("zero", "linear"))
        self.in_dim = check_int("in_dim", owner, in_dim, low=1, high=1 << 16)
        self.out_dim = check_int("out_dim", owner, out_dim, low=1, high=1 << 12)
        self.n_inducing = check_int("n_inducing", owner, n_inducing, low=1, high=4096)
        self.feat_dim = check_int("feat_dim", owner, feat_dim, low=1, high=4096)
        self.jitter = None if jitter is None else check_real("jitter", owner, jitter, low=0)
        M, p = n_inducing, feat_dim
        self.proj = nn.Linear(in_dim, p)
        self.norm = nn.LayerNorm(p)
        g = torch.Generator().manual_seed(0)
        self.inducing = nn.Parameter(torch.randn(M, p, generator=g))
        self.log_lengthscale = nn.Parameter(torch.tensor(math.log(math.sqrt(p))))
        self.log_outputscale = nn.Parameter(torch.tensor(0.0))
        self.log_noise = nn.Parameter(torch.full((out_dim,), math.log(1e-2)))
        self.variational_mean = nn.Parameter(torch.zeros(out_dim, M))
        self.variational_chol = nn.Parameter(torch.eye(M).expand(out_dim, M, M).clone())
        if self.mean_function == "linear":  # zero-initialised: a fresh head is the zero-mean GP
            self.prior_mean = nn.Linear(p, out_dim)
            nn.init.zeros_(self.prior_mean.weight)
            nn.init.zeros_(self.prior_mean.bias)
        self._cache: tuple | None = None

    def _jitter(self, dtype: torch.dtype) -> float:
        if self.jitter is not None:
            return self.jitter
        return 1e-10 if dtype == torch.float64 else 1e-4

    def kernel(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        r""":math:`s_f^2\exp(-\lVert a-b\rVert^2/2\ell^2)` for a (n, p), b (m, p) -> (n, m)."""
        ls = self.log_lengthscale.exp()
        d2 = (a[:, None, :] - b[None, :, :]).div(ls).pow(2).sum(-1)
        return self.log_outputscale.exp().pow(2) * torch.exp(-0.5 * d2)

    def features(self, h: torch.Tensor) -> torch.Tensor:
        r""":math:`\phi=\mathrm{LayerNorm}(Wh+b)`, (..., in_dim) -> (..., p)."""
        return self.norm(self.proj(h))

    def chol_factor(self) -> torch.Tensor:
        """:math:`L_o`, the lower triangle of ``variational_chol``, (out_dim, M, M)."""
        return torch.tril(self.variational_chol)

    def _versions(self) -> tuple:
        return tuple((p._version, p.data_ptr()) for p in self._cached_params())

    def _cached_params(self) -> tuple[torch.Tensor, ...]:
        return (
            self.inducing,
            self.log_lengthscale,
            self.log_outputscale,
            self.log_noise,
            self.variational_mean,
            self.variational_chol,
        )

    def _constants(self, dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
        r"""Everything that does not depend on the input, from one Cholesky factor of
        :math:`K_{zz}`: the scaled inducing inputs :math:`Z/\ell`, the kernel offsets
        :math:`2\log s_f-\lVert z_m/\ell\rVert^2/2`, the matrix
        :math:`G=L_{zz}^{-\top}[\,I\mid m^\top\mid (S_1-I)\mid\dots\mid(S_O-I)\,]`
        (M, M + O + O M) and :math:`s_f^2`, :math:`s_{n,o}^2`.

        Cached (keyed on the parameters' versions and storage, dtype and device) when autograd is
        off, so an inference forward reuses them; recomputed on every forward that needs
        gradients, and dropped by ``train()`` / ``eval()``.
        """
        cacheable = not torch.is_grad_enabled()
        key = (dtype, self.inducing.device, self._versions())
        if cacheable and self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        inv_ls = torch.exp(-self.log_lengthscale).to(dtype)
        log_sf2 = 2 * self.log_outputscale.to(dtype)
        zs = self.inducing.to(dtype) * inv_ls
        M = zs.shape[0]
        eye = torch.eye(M, dtype=dtype, device=zs.device)
        kzz = self.kernel(self.inducing.to(dtype), self.inducing.to(dtype))
        lzz = torch.linalg.cholesky(kzz + self._jitter(dtype) * eye)
        L = self.chol_factor().to(dtype)
        s_minus_i = L @ L.transpose(-1, -2) - eye  # (O, M, M)
        right = torch.cat(
            [eye, self.variational_mean.to(dtype).T, s_minus_i.transpose(0, 1).reshape(M, -1)],
            dim=1,
        )
        g = torch.linalg.solve_triangular(lzz.T, right, upper=True)  # L_zz^{-T} [...]
        offset = log_sf2 - 0.5 * zs.pow(2).sum(-1)
        consts = (
            zs.T.contiguous(),
            offset,
            g,
            log_sf2.exp(),
            self.log_noise.to(dtype).exp().pow(2),
        )
        if cacheable:
            self._cache = (key, consts)
        return consts

    def train(self, mode: bool = True) -> SVGPHead:
        self._cache = None
        return super().train(mode)

    def predict_features(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        r"""Predictive mean and variance at GP inputs ``x`` (n, p): two (n, out_dim) tensors.

        One matrix product :math:`K_{xz}G` gives :math:`A=K_{xz}L_{zz}^{-\top}`, :math:`Am_o` and
        :math:`A(S_o-I)`; then :math:`\sigma^2_o=s_f^2+\sum_k [A(S_o-I)]_{nk}A_{nk}+s_{n,o}^2`
        (the same as :math:`k(x,x)-\lVert A\rVert^2+\lVert AL_o\rVert^2+s_{n,o}^2`).
        """
        zs_t, offset, g, sf2, noise = self._constants(x.dtype)
        M, O = zs_t.shape[1], self.out_dim
        xs = x * torch.exp(-self.log_lengthscale).to(x.dtype)
        # log k(x, z) = 2 log s_f - |x/l|^2 / 2 - |z/l|^2 / 2 + (x/l).(z/l)
        kxz = torch.addmm(offset, xs, zs_t).sub_(0.5 * xs.pow(2).sum(-1, keepdim=True)).exp_()
        out = kxz @ g
        a, mean, a_s = out[:, :M], out[:, M : M + O], out[:, M + O :]
        if self.mean_function == "linear":
            mean = self.prior_mean(x) + mean
        quad = (a_s.reshape(-1, O, M) * a[:, None, :]).sum(-1)
        var = (quad + sf2).clamp_(min=0) + noise
        return mean, var

    def forward(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        check_tensor("h", "SVGPHead", h, shape=(None, None, self.in_dim))
        check_dtype("h", "SVGPHead", h, self)
        B, Q, _ = h.shape
        with torch.autocast(h.device.type, enabled=False):
            x = self.features(h.to(self.proj.weight.dtype)).reshape(B * Q, -1)
            mean, var = self.predict_features(x)
        return mean.reshape(B, Q, -1), var.reshape(B, Q, -1)

    def kl(self) -> torch.Tensor:
        r""":math:`\sum_o\mathrm{KL}(\mathcal{N}(m_o,L_oL_o^\top)\,\|\,\mathcal{N}(0,I))`."""
        L = self.chol_factor()
        m = self.variational_mean
        M = m.shape[-1]
        logdet = 2 * torch.log(torch.diagonal(L, dim1=-2, dim2=-1).abs()).sum(-1)
        trace = L.pow(2).sum((-2, -1))
        return 0.5 * (trace + m.pow(2).sum(-1) - M - logdet).sum()


def gaussian_nll(mean: torch.Tensor, var: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    r"""Mean Gaussian negative log-likelihood
    :math:`\tfrac12\big(\log 2\pi\sigma^2+(y-\mu)^2/\sigma^2\big)` over all elements."""
    owner = "gaussian_nll"
    check_tensor("mean", owner, mean)
    for name, x in (("var", var), ("target", target)):
        check_tensor(name, owner, x)
        if x.shape != mean.shape:
            raise param_error(
                name, owner, f"of the shape of 'mean' {tuple(mean.shape)}", tuple(x.shape)
            )
    if bool((var <= 0).any()):
        raise param_error("var", "gaussian_nll", "strictly positive", "a variance <= 0")
    return _gaussian_nll(mean, var, target)


def _gaussian_nll(mean: torch.Tensor, var: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return 0.5 * (torch.log(2 * math.pi * var) + (target - mean).pow(2) / var).mean()
