"""The source manifold S of the rare-gates paper: global minimality, normal rates, stationarity (Appendix 15).

``S = {a_i = r_i = sqrt(omega_i), w_i = r_i e1, omega_i > 0, omega_1 + omega_2 = B_s}`` with
``B_s = 1 - 2 lambda`` (derived in :func:`.dynamics.clone_amplitude`). The source objective is
``F_s = R_s + (lambda/2)|theta|^2``, ``R_s = E[(f - relu(x1))^2]/2``, ``theta = (a1, a2, w1, w2)``.

Near coincident directions the kernel is ``K(u, v) = u.v/2 + h(c, d)/(2 pi)`` with ``c = u x v``,
``d = u.v`` and ``h = |c| - atan2(|c|, d) d = O(|c|^3)`` (Appendix 14), so on S, where every
pair (w1, w2), (w_i, e1) is positively aligned, ``F_s`` is C^2 with the Hessian of the
linear model ``(1/4)|a1 w1 + a2 w2 - e1|^2 + (lambda/2)|theta|^2``.
"""

from __future__ import annotations

from functools import cache
from types import MappingProxyType

import sympy as sp
from sympy.polys.matrices import DomainMatrix

from .dynamics import alpha, beta, clone_amplitude, p, polar_risk
from .kernels import J_kernel, g_kernel
from .symbols import a1, a2, lam, omega1, omega2, r1, r2, t

z = sp.Symbol("z", nonnegative=True)  # ||f||_{L2}
cc = sp.Symbol("c", real=True)  # cross product u x v
dd = sp.Symbol("d", positive=True)  # dot product u.v (positive near coincident directions)
THETA = sp.symbols("a1 a2 w1x w1y w2x w2y", real=True)  # Cartesian parameters, numerics.model order


def manifold_point(share: sp.Expr = p) -> dict:
    """Polar coordinates of the point of S with ``omega_1 = share * B_s`` (share in [0, 1] gives the closure)."""
    Bs = clone_amplitude("source")
    w1, w2 = sp.sqrt(share * Bs), sp.sqrt((1 - share) * Bs)
    return {a1: w1, r1: w1, a2: w2, r2: w2, alpha: 0, beta: 0}


def manifold_value(share: sp.Expr = p) -> sp.Expr:
    """``F_s`` on the closure of S: ``lambda - lambda^2`` for every allocation (Appendix 15, Proposition 11).

    >>> manifold_value(), manifold_value(0)
    (-lambda**2 + lambda, -lambda**2 + lambda)
    """
    F = polar_risk("source") + lam / 2 * (a1**2 + a2**2 + r1**2 + r2**2)
    return sp.expand(sp.simplify(F.subs(manifold_point(share))))


def origin_value() -> sp.Expr:
    """``F_s(0) = E[relu(x1)^2]/2 = J(0)/2 = 1/4`` (Appendix 15).

    >>> origin_value()
    1/4
    """
    F = polar_risk("source") + lam / 2 * (a1**2 + a2**2 + r1**2 + r2**2)
    return sp.simplify(F.subs({a1: 0, a2: 0}).subs({r1: 0, r2: 0}))


def coercivity_steps() -> dict:
    """The steps of ``F_s >= (1/2)(||f|| - 1/sqrt2)^2 + lambda sqrt2 ||f|| >= lambda - lambda^2`` (Appendix 15).

    Each entry is an expression that is >= 0 for the reason stated; the test proves the
    stated identity and the sign. With ``|a_i|`` for a_i (signs are free):

    - ``norm_y``: ``||relu(x1)||^2 = J(0) = 1/2``.
    - ``reverse_triangle``: ``||f - y||^2 - (||f|| - ||y||)^2 = 2(||f|| ||y|| - <f, y>) >= 0``
      (Cauchy-Schwarz), so ``R_s >= (1/2)(||f|| - 1/sqrt2)^2``.
    - ``am_gm``: ``(a_i^2 + r_i^2)/2 - |a_i| r_i = (|a_i| - r_i)^2/2 >= 0``, so the weight
      decay is ``>= lambda sum_i |a_i| r_i``.
    - ``triangle``: ``(sum_i |a_i| r_i)^2/2 - ||f||^2 = |a1 a2| r1 r2 - 2 a1 a2 r1 r2 J(delta)
      >= |a1 a2| r1 r2 (1 - 2 J(delta)) >= 0`` since ``J <= J(0) = 1/2`` (``J' = -g <= 0``), so
      ``sum_i |a_i| r_i >= sqrt2 ||f||``.
    - ``one_d``: ``phi(z) - (lambda - lambda^2) = (z - z_*)^2/2`` for
      ``phi(z) = (z - 1/sqrt2)^2/2 + lambda sqrt2 z``, ``z_* = (1 - 2 lambda)/sqrt2``.
    - ``norm_f_sq_on_S``: ``||f||^2 = B_s^2/2 = z_*^2`` on S, so S attains every step.

    >>> steps = coercivity_steps()
    >>> steps["norm_y"], sp.simplify(steps["one_d"] - (z - steps["z_star"])**2 / 2)
    (1/2, 0)
    """
    J = J_kernel()
    delta = sp.Symbol("delta", nonnegative=True)
    abs1, abs2 = sp.symbols("A1 A2", nonnegative=True)  # |a_1|, |a_2|
    sgn = sp.Symbol("sigma", real=True)  # sign of a1 a2: a1 a2 = sigma |a1| |a2|, sigma^2 = 1
    norm_f_sq = (
        (abs1 * r1) ** 2 * J.subs(t, 0)
        + (abs2 * r2) ** 2 * J.subs(t, 0)
        + 2 * sgn * abs1 * abs2 * r1 * r2 * J.subs(t, delta)
    )
    nf, ny, ip = sp.symbols("N_f N_y P", real=True)  # ||f||, ||y||, <f, y>
    phi1d = (z - 1 / sp.sqrt(2)) ** 2 / 2 + lam * sp.sqrt(2) * z
    z_star = sp.solve(sp.diff(phi1d, z), z)[0]
    return {
        "norm_y": J.subs(t, 0),
        "reverse_triangle": sp.expand((nf**2 - 2 * ip + ny**2) - (nf - ny) ** 2),
        "am_gm": (abs1**2 + r1**2) / 2 - abs1 * r1,
        "triangle": sp.expand((abs1 * r1 + abs2 * r2) ** 2 / 2 - norm_f_sq),
        "triangle_vars": (abs1, abs2, sgn, delta),
        "J_decreasing": sp.simplify(sp.diff(J, t) + g_kernel()),
        "g": g_kernel(),
        "phi": phi1d,
        "z_star": z_star,
        "phi_curvature": sp.diff(phi1d, z, 2),
        "one_d": sp.expand(phi1d - (lam - lam**2)),
        "norm_f_sq_on_S": sp.simplify(norm_f_sq.subs({delta: 0, sgn: 1, abs1: r1, abs2: r2}).subs(manifold_point())),
    }


def h_pieces() -> tuple[sp.Expr, sp.Expr]:
    """The two analytic pieces of ``h(c, d) = |c| - atan2(|c|, d) d`` for ``d > 0`` (Appendix 14).

    For ``c >= 0``: ``c - d atan(c/d)``; for ``c <= 0``: ``-c - d atan(-c/d)``. Both have
    vanishing value, gradient and Hessian at ``c = 0``, and third c-derivatives ``+-2/d^2``: h is
    C^2 across ``c = 0`` but not C^3.

    >>> hp, hm = h_pieces()
    >>> [sp.simplify(sp.diff(hp, cc, k).subs(cc, 0)) for k in range(4)]
    [0, 0, 0, 2/d**2]
    """
    return cc - sp.atan2(cc, dd) * dd, -cc - sp.atan2(-cc, dd) * dd


def h_two_jet(piece: sp.Expr) -> list[sp.Expr]:
    """Value, (d_c, d_d) and the three second derivatives of an h piece at ``c = 0``, ``d > 0``.

    >>> [h_two_jet(h) for h in h_pieces()]
    [[0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]]
    """
    derivs = [
        piece,
        sp.diff(piece, cc),
        sp.diff(piece, dd),
        sp.diff(piece, cc, 2),
        sp.diff(piece, cc, dd),
        sp.diff(piece, dd, 2),
    ]
    return [sp.simplify(e.subs(cc, 0)) for e in derivs]


def linear_objective() -> sp.Expr:
    """``(1/4)|a1 w1 + a2 w2 - e1|^2 + (lambda/2)|theta|^2`` in the Cartesian parameters :data:`THETA`."""
    A1, A2, x1, y1, x2, y2 = THETA
    res = sp.Matrix([A1 * x1 + A2 * x2 - 1, A1 * y1 + A2 * y2])
    return res.dot(res) / 4 + lam / 2 * sum(v**2 for v in THETA)


def kernel_remainder(sign: int) -> sp.Expr:
    """``R_s - R_lin`` in Cartesian parameters with the h piece of the given sign for every pair (Appendix 14).

    ``R_s = (1/2)[sum_ij a_i a_j K(w_i, w_j) - 2 sum_i a_i K(w_i, e1) + K(e1, e1)]`` and
    ``K = u.v/2 + h/(2 pi)``; the ``u.v/2`` parts sum to ``(1/4)|a1 w1 + a2 w2 - e1|^2``, so the
    remainder is ``(a1 a2 h(w1, w2) - a1 h(w1, e1) - a2 h(w2, e1))/(2 pi)``.
    """
    A1, A2, x1, y1, x2, y2 = THETA
    hp, hm = h_pieces()
    piece = hp if sign > 0 else hm

    def h(u, v):
        return piece.subs({cc: u[0] * v[1] - u[1] * v[0], dd: u[0] * v[0] + u[1] * v[1]}, simultaneous=True)

    w1, w2, e1 = (x1, y1), (x2, y2), (1, 0)
    return (A1 * A2 * h(w1, w2) - A1 * h(w1, e1) - A2 * h(w2, e1)) / (2 * sp.pi)


def cartesian_point(share: sp.Expr = p) -> dict:
    """The point of S with ``omega_1 = share * B_s`` in the Cartesian parameters :data:`THETA`."""
    pt = manifold_point(share)
    A1, A2, x1, y1, x2, y2 = THETA
    return {A1: pt[a1], A2: pt[a2], x1: pt[r1], y1: 0, x2: pt[r2], y2: 0}


def manifold_hessian(share: sp.Expr = p) -> sp.Matrix:
    """Hessian of the linear-model objective at the point of S with ``omega_1 = share * B_s`` (Appendix 15)."""
    return sp.hessian(linear_objective(), THETA).subs(cartesian_point(share))


@cache
def normal_decay_rates() -> MappingProxyType:
    """Eigenvalues (with multiplicity) of the Hessian of ``F_s`` at a general point of S (Appendix 15, Proposition 11).

    The characteristic polynomial factors for every allocation p into
    ``x (x - B_s)(x - 1/2)(x - lambda)(x - 2 lambda)^2``: one tangent zero and the five normal
    rates ``B_s, 1/2, lambda, 2 lambda, 2 lambda``.

    >>> sorted(normal_decay_rates().items(), key=str)
    [(0, 1), (1 - 2*lambda, 1), (1/2, 1), (2*lambda, 2), (lambda, 1)]
    """
    x = sp.Symbol("x")
    # The Hessian of the (polynomial) linear objective at a_i = w_i.e1 = s_i, w_i.e2 = 0, with s_i symbols: its
    # characteristic polynomial is computed exactly in Q[s_1, s_2, lambda][x]; then s_i -> sqrt(omega_i) of the
    # point of S (cartesian_point), which gives charpoly(manifold_hessian()) without radicals inside Berkowitz.
    s1, s2 = sp.symbols("s_1 s_2", positive=True)
    A1, A2, x1, y1, x2, y2 = THETA
    at_s = {A1: s1, A2: s2, x1: s1, y1: 0, x2: s2, y2: 0}
    pt = cartesian_point()
    values = {s1: pt[A1], s2: pt[A2]}
    if {k: sp.sympify(v).subs(values) for k, v in at_s.items()} != pt:
        raise RuntimeError("the point of S is not of the form a_i = w_i.e1, w_i.e2 = 0")
    H = DomainMatrix.from_Matrix(sp.hessian(linear_objective(), THETA).subs(at_s))
    coeffs = [H.domain.to_sympy(c) for c in H.charpoly()]
    charpoly = sp.Add(*[c * x ** (len(coeffs) - 1 - k) for k, c in enumerate(coeffs)])
    poly = sp.Poly(sp.expand(charpoly.subs(values)), x)
    rates: dict = {}
    _, factors = sp.factor_list(poly.as_expr(), x)
    for fac, mult in factors:
        fp = sp.Poly(fac, x)
        if fp.degree() != 1:
            raise RuntimeError(f"non-linear factor {fac} in the characteristic polynomial")
        root = sp.simplify(sp.solve(fac, x)[0])
        rates[root] = rates.get(root, 0) + mult
    return MappingProxyType(rates)


def angular_stationarity() -> dict:
    """Solutions of ``dR_s/dalpha = 0`` for omega2 and ``dR_s/dbeta = 0`` for omega1 (Appendix 15).

    ``dR_s/dalpha = omega_1 (g(alpha) - omega_2 g(delta))`` and
    ``dR_s/dbeta = omega_2 (g(beta) - omega_1 g(delta))``, ``delta = alpha + beta``, so

    >>> sol = angular_stationarity()
    >>> g = g_kernel()
    >>> [sp.simplify(sol[omega2] - g.subs(t, alpha) / g.subs(t, alpha + beta)),
    ...  sp.simplify(sol[omega1] - g.subs(t, beta) / g.subs(t, alpha + beta))]
    [0, 0]
    """
    R = polar_risk("source").subs({a1: omega1 / r1, a2: omega2 / r2})
    sol_2 = sp.solve(sp.diff(R, alpha), omega2)
    sol_1 = sp.solve(sp.diff(R, beta), omega1)
    if len(sol_1) != 1 or len(sol_2) != 1:
        raise RuntimeError(f"expected one stationary allocation each, got {sol_1}, {sol_2}")
    return {omega1: sp.simplify(sol_1[0]), omega2: sp.simplify(sol_2[0])}


def origin_gradient_form() -> dict:
    """Leading order of ``|grad F_s|^2`` near the origin, per unit, as a quadratic form in ``(a, r)`` (Appendix 15).

    Scaling ``theta -> eps theta`` in :func:`.dynamics.polar_risk` (one unit at angle ``alpha``
    from e1, the other switched off) gives ``F_s = 1/4 + eps^2 Phi + O(eps^4)``; ``Phi_residual``
    is ``Phi - [lambda (a^2 + r^2)/2 - a r J(alpha)]`` (0: the units enter ``Phi`` separately,
    through the kernel J). In the orthonormal frame ``(d/da, d/dr, r^{-1} d/dalpha)`` the gradient
    of ``lambda (a^2 + r^2)/2 - a r j0`` (``j0 = J(alpha)``, ``j1 = J'(alpha) = -g(alpha)``) is
    linear in ``(a, r)``, so ``|grad Phi|^2 = (a, r) M (a, r)^T``. Returns ``Phi``, its residual,
    ``M`` and ``det M`` as polynomials in ``lambda, j0, j1``; where ``det M > 0`` on ``[0, pi]``,
    ``|grad F_s| >= c |theta| - C |theta|^3`` near 0 and the origin is an isolated critical point.
    """
    eps = sp.Symbol("epsilon", positive=True)
    j0, j1 = sp.symbols("j0 j1", real=True)
    F = polar_risk("source") + lam / 2 * (a1**2 + a2**2 + r1**2 + r2**2)
    one = F.subs({a2: 0, r2: 0}).subs({a1: eps * a1, r1: eps * r1})
    phi2 = sp.expand(one).coeff(eps, 2)
    model = lam * (a1**2 + r1**2) / 2 - a1 * r1 * J_kernel().subs(t, alpha)
    generic = lam * (a1**2 + r1**2) / 2 - a1 * r1 * j0
    grad = [sp.diff(generic, a1), sp.diff(generic, r1), -a1 * r1 * j1 / r1]  # d/dalpha of J is j1
    sq = sp.expand(sum(g**2 for g in grad))
    M = sp.Matrix(2, 2, lambda i, j: sp.expand(sp.diff(sq, (a1, r1)[i], (a1, r1)[j]) / 2))
    return {
        "Phi": phi2,
        "Phi_residual": sp.expand(phi2 - model),
        "M": M,
        "det": sp.expand(M.det()),
        "symbols": (j0, j1),
    }


def manifold_tangent(share: sp.Expr = p) -> sp.Matrix:
    """Unit tangent of S at the point with ``omega_1 = share * B_s``, in the Cartesian parameters :data:`THETA`.

    S is the arc ``s_1 (1, 0, 1, 0, 0, 0) + s_2 (0, 1, 0, 0, 1, 0)``, ``s_1^2 + s_2^2 = B_s``, so the
    tangent is ``(-s_2, s_1, -s_2, 0, s_1, 0) / sqrt(2 B_s)``.

    >>> manifold_tangent(sp.Rational(1, 2)).T
    Matrix([[-1/2, 1/2, -1/2, 0, 1/2, 0]])
    """
    pt = cartesian_point(share)
    A1, A2, x1, _, x2, _ = THETA
    s1, s2 = pt[A1], pt[A2]
    v = sp.Matrix([-s2, s1, -s2, 0, s1, 0])
    return sp.simplify(v / sp.sqrt(v.dot(v)))


def normal_lyapunov_rates() -> dict:
    """The linear part of Appendix 11.2's ``W_s = xi^T P(l_a) xi``, ``dW_s/dt <= -kappa W_s``, for two choices of P.

    The source flow is ``theta' = -grad F_s``; at the point of S with allocation ``p`` its
    linearisation is ``xi' = -H xi`` with ``H`` the Hessian (:func:`manifold_hessian`), symmetric, with
    the tangent ``t`` (:func:`manifold_tangent`) in its kernel, so ``H`` commutes with the normal
    projector ``N = I - t t^T``. For normal displacements ``xi``:

    - ``P = H`` (the normal Hessian, so ``W_s ~ 2 (F_s - min F_s)``): ``W_s' = -2 xi^T H^2 xi``, and
      ``H^2 - lambda H`` is positive semidefinite, so ``W_s' <= -2 lambda W_s``;
    - ``P = I`` (the squared normal distance): ``W_s' = -2 xi^T H xi``, and ``N (H - lambda I) N`` is
      positive semidefinite, so ``W_s' <= -2 lambda W_s``.

    By the spectral theorem the eigenvalues of both matrices are ``mu^2 - lambda mu`` and ``mu - lambda``
    over the normal rates ``mu`` of :func:`normal_decay_rates` (and 0 on the tangent). Returns ``H t``
    (zero), the two spectra (root: multiplicity) and ``lambda_max``, the largest lambda for which both
    are ``>= 0`` (``B_s - lambda = 1 - 3 lambda``). The value ``lambda`` is attained, so ``kappa = 2 lambda``
    is the linear rate and it is sharp.

    >>> r = normal_lyapunov_rates()
    >>> sorted(r["P=I"].items(), key=str), r["lambda_max"]
    ([(0, 2), (1 - 3*lambda, 1), (1/2 - lambda, 1), (lambda, 2)], 1/3)
    >>> r["H t"].is_zero_matrix
    True
    """
    H = manifold_hessian()
    tan = manifold_tangent()
    rates = normal_decay_rates()
    out: dict = {"H t": sp.simplify(H * tan)}
    spectra = {"P=H": lambda mu: mu**2 - lam * mu, "P=I": lambda mu: mu - lam}
    for name, f in spectra.items():
        roots: dict = {0: 1}  # the tangent
        for mu, mult in rates.items():
            if mu == 0:
                continue
            root = sp.expand(f(mu))
            roots[root] = roots.get(root, 0) + mult
        out[name] = roots
    bounds = [sp.solve(sp.Eq(r, 0), lam) for name in spectra for r in out[name] if r != 0]
    out["lambda_max"] = min(v for sol in bounds for v in sol if v.is_positive)
    return out
