"""The scalar two-layer model under the central flow (Appendix B; Figure 1).

Model: L(u, v) = (u v - y)^2 / 2, the loss whose Hessian is the one displayed in the
paper, H = [[v^2, 2uv - y], [2uv - y, u^2]]; the gradient-flow law is h = u^2 - v^2.
With b := 2uv - y and R := sqrt(h^2/4 + b^2) (both displayed in the paper),

- lambda_max(H) = (u^2 + v^2)/2 + R (the trace/2 plus the half-gap of the 2 x 2 Hessian);
- at a zero-loss point (uv = y) lambda_max = u^2 + v^2 = sqrt(h^2 + 4 y^2);
- a general covariance Sigma gives h' = -(eta/2) D_{grad h}<H, Sigma> = -2 eta (sigma_vv u^2 - sigma_uu v^2)
  (sigma_uv drops out);
- one critical direction, Sigma = sigma^2 w w^T with w the unit top eigenvector, gives the
  reading of the lost Eq. (18): h' = -eta sigma^2 h lambda_max / R
  = -eta sigma^2 h (1 + (u^2 + v^2) / (2R)), hence h h' <= 0;
- on the stability edge lambda_max = 2/eta at zero loss, |h| = 2 sqrt(eta^-2 - y^2);
- sigma^2 on the active constraint (the central flow of Cohen et al. 2025 keeps
  lambda_max = 2/eta): sigma^2 = -2 <grad lambda_max, grad L> / |grad lambda_max|^2.

>>> sp.factor(drift_general_sigma())
-2*eta*(-sigma_uu*v**2 + sigma_vv*u**2)
"""

from __future__ import annotations

from functools import cache

import sympy as sp

from .laws import directional, eta, gradient

u, v = sp.symbols("u v", real=True)
y = sp.Symbol("y", real=True)  # the target
sigma2 = sp.Symbol("sigma2", nonnegative=True)  # sigma^2, the oscillation variance along w
s_uu, s_uv, s_vv = sp.symbols("sigma_uu sigma_uv sigma_vv", real=True)
h_sym = sp.Symbol("h", real=True)  # stands for u^2 - v^2 in the displayed forms
THETA = (u, v)


def loss() -> sp.Expr:
    """L = (u v - y)^2 / 2."""
    return (u * v - y) ** 2 / 2


def law() -> sp.Expr:
    """h = u^2 - v^2, the gradient-flow balancedness law (Section 2)."""
    return u**2 - v**2


def hessian() -> sp.Matrix:
    """H = grad^2 L = [[v^2, 2uv - y], [2uv - y, u^2]] (Appendix B, 'Central-flow drift').

    >>> hessian()
    Matrix([
    [         v**2, 2*u*v - y],
    [2*u*v - y,          u**2]])
    """
    return sp.hessian(loss(), THETA).applyfunc(sp.expand)


def b() -> sp.Expr:
    """b := 2 u v - y, the off-diagonal Hessian entry."""
    return 2 * u * v - y


def R() -> sp.Expr:
    """R := sqrt(h^2/4 + b^2), half the gap between the two Hessian eigenvalues."""
    return sp.sqrt(law() ** 2 / 4 + b() ** 2)


def eigenvalues() -> list[sp.Expr]:
    """The two Hessian eigenvalues as SymPy finds them (roots of the characteristic polynomial)."""
    return list(hessian().eigenvals().keys())


def lambda_max_closed() -> sp.Expr:
    """lambda_max = (u^2 + v^2)/2 + R."""
    return (u**2 + v**2) / 2 + R()


def top_eigenvector() -> sp.Matrix:
    """The unit eigenvector w of lambda_max: w = (b, h/2 + R) / sqrt(R (2R + h)).

    Valid off the set {b = 0, h <= 0} (there (b, h/2 + R) = 0; use (R - h/2, b) instead).
    """
    h = law()
    raw = sp.Matrix([b(), h / 2 + R()])
    return raw / sp.sqrt(R() * (2 * R() + h))


@cache
def drift_general_sigma() -> sp.Expr:
    """h' = -(eta/2) D_{grad h} <H, Sigma> for a general symmetric Sigma = [[s_uu, s_uv], [s_uv, s_vv]] (Section 3)."""
    Sigma = sp.Matrix([[s_uu, s_uv], [s_uv, s_vv]])
    pairing = (hessian() * Sigma).trace()
    return sp.expand(-eta / 2 * directional(pairing, THETA, gradient(law(), THETA)))


@cache
def drift_one_direction() -> sp.Expr:
    """h' = -(eta/2) D_{grad h} <H, Sigma> with Sigma = sigma^2 w w^T frozen (w the top eigenvector here).

    Derived from the general-Sigma drift by substituting Sigma = sigma^2 w w^T.
    """
    w = top_eigenvector()
    sub = {s_uu: sigma2 * w[0] ** 2, s_uv: sigma2 * w[0] * w[1], s_vv: sigma2 * w[1] ** 2}
    return drift_general_sigma().subs(sub)


def eq18() -> sp.Expr:
    """The reading of the lost Eq. (18): h' = -eta sigma^2 h lambda_max / R = -eta sigma^2 h (1 + (u^2 + v^2)/(2R)).

    >>> sp.simplify(eq18() - (-eta * sigma2 * law() * (1 + (u**2 + v**2) / (2 * R()))))
    0
    """
    return -eta * sigma2 * law() * lambda_max_closed() / R()


def eq18_in_h() -> sp.Expr:
    """Eq. (18) read in the paper's variables: -eta sigma^2 h (1 + (u^2 + v^2) / (2 sqrt(h^2/4 + b^2)))."""
    bb = sp.Symbol("b", real=True)
    return -eta * sigma2 * h_sym * (1 + (u**2 + v**2) / (2 * sp.sqrt(h_sym**2 / 4 + bb**2)))


def grad_lambda_max() -> sp.Matrix:
    """grad lambda_max, differentiated from the closed form (u^2 + v^2)/2 + R."""
    return gradient(lambda_max_closed(), THETA)


@cache
def sigma2_on_constraint() -> sp.Expr:
    """sigma^2 = -2 <grad lambda_max, grad L> / |grad lambda_max|^2 (one critical direction).

    On the active constraint lambda_max = 2/eta the central flow theta' = -eta grad L -
    (eta/2) grad <H, Sigma>, Sigma = sigma^2 w w^T frozen, has grad <H, Sigma> = sigma^2 grad
    lambda_max (Hellmann-Feynman), so d lambda_max/dt = 0 is linear in sigma^2 with this root
    (Cohen et al. 2025; the paper's own definition is lost in the text). It is admissible
    (sigma^2 >= 0) where gradient flow would raise the sharpness.
    """
    g = grad_lambda_max()
    gl = gradient(loss(), THETA)
    return -2 * (g.T * gl)[0] / (g.T * g)[0]


def sigma2_closed() -> sp.Expr:
    """The constraint's sigma^2 in a readable form (equal to :func:`sigma2_on_constraint`).

    With e = u v - y: <grad lambda_max, grad L> = 2 e (u v + b (u^2 + v^2)/R) and
    |grad lambda_max|^2 = (u^2 + v^2)(1 + (h^2/4 + 4 b^2)/R^2) + (h^2 + 8 b u v)/R.
    """
    e, h, bb, RR = u * v - y, law(), b(), R()
    num = -4 * e * (u * v + bb * (u**2 + v**2) / RR)
    den = (u**2 + v**2) * (1 + (h**2 / 4 + 4 * bb**2) / RR**2) + (h**2 + 8 * bb * u * v) / RR
    return num / den


def central_flow_velocity_one_direction() -> sp.Matrix:
    """theta' = -eta grad L - (eta/2) grad_theta <H(theta), Sigma>, Sigma = sigma^2 w w^T frozen at theta.

    grad_theta <H, Sigma> is taken with symbolic Sigma entries, which are then replaced by
    sigma^2 w w^T (w the top eigenvector at the same theta).
    """
    Sigma = sp.Matrix([[s_uu, s_uv], [s_uv, s_vv]])
    pairing = (hessian() * Sigma).trace()
    vel = -eta * gradient(loss(), THETA) - eta / 2 * gradient(pairing, THETA)
    w = top_eigenvector()
    return vel.subs({s_uu: sigma2 * w[0] ** 2, s_uv: sigma2 * w[0] * w[1], s_vv: sigma2 * w[1] ** 2})


def zero_loss_identity() -> sp.Expr:
    """(u^2 + v^2)^2 - (h^2 + 4 (u v)^2), identically 0: at zero loss u^2 + v^2 = sqrt(h^2 + 4 y^2).

    >>> zero_loss_identity()
    0
    """
    return sp.expand((u**2 + v**2) ** 2 - (law() ** 2 + 4 * (u * v) ** 2))


def terminal_lambda_max() -> sp.Expr:
    """lambda_max at a zero-loss point (u v = y) in the paper's variables (h, y) (Appendix B, 'Stable terminal values').

    There b = y, and u^2 + v^2 = sqrt(h^2 + 4 y^2) by :func:`zero_loss_identity` (u^2 + v^2 >= 0),
    so lambda_max = sqrt(h^2 + 4 y^2)/2 + sqrt(h^2/4 + y^2).

    >>> terminal_lambda_max()
    sqrt(h**2 + 4*y**2)
    """
    s = sp.sqrt(h_sym**2 + 4 * y**2)
    return sp.simplify(s / 2 + sp.sqrt(h_sym**2 / 4 + y**2))


def terminal_bound() -> sp.Expr:
    """|h| on the stability edge at zero loss: the roots of terminal_lambda_max = 2/eta are +-|h|.

    Real when eta |y| <= 1; the nonnegative root is returned.

    >>> sp.simplify(terminal_bound() - 2 * sp.sqrt(eta**-2 - y**2))
    0
    """
    roots = sp.solve(sp.Eq(terminal_lambda_max(), 2 / eta), h_sym)
    # the roots are +-c with c >= 0 where real; pick c by its sign at a real interior point
    probe = {eta: sp.Rational(1, 2), y: sp.Rational(1, 3)}
    (pos,) = [c for c in roots if c.subs(probe) > 0]
    return pos


def gd_law_step() -> tuple[sp.Expr, sp.Expr]:
    """(h after one GD step, h_k (1 - eta^2 e_k^2)) for theta_{k+1} = theta_k - eta grad L, e_k = u_k v_k - y.

    u_{k+1} = u - eta e v and v_{k+1} = v - eta e u, so the cross terms -2 eta e u v cancel in
    u_{k+1}^2 - v_{k+1}^2 and h_{k+1} = h_k - eta^2 e^2 (u^2 - v^2) = h_k (1 - eta^2 e_k^2): GD
    leaves the level set h = h_0 at every step with e_k != 0 and h_k != 0, before any EOS effect.

    >>> nxt, closed = gd_law_step()
    >>> sp.expand(nxt - closed)
    0
    """
    step = {t: t - eta * sp.diff(loss(), t) for t in THETA}
    nxt = sp.expand(law().subs(step, simultaneous=True))
    e = u * v - y
    return nxt, sp.expand(law() * (1 - eta**2 * e**2))
