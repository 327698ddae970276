"""Invariances, gradient-flow conservation laws, their number, and their central-flow drift (Sections 1-3).

Every model is written through a reparametrisation phi (Section 2): the loss is
L(theta) = F(phi(theta)) for an arbitrary loss F of the product, so
grad L = dphi^T grad F(phi) lies in W_phi(theta) = range(dphi(theta)^T) (Eq. (2)).

- scalar: theta = (u, v), phi = u v;
- matrix factorisation (MF): theta = (U, V), U in R^{n x r}, V in R^{m x r}, phi = U V^T;
- two-layer ReLU: theta = (U, V), U in R^{n x r} with columns u_j, V in R^{d x r} with
  columns v_j; inside a fixed activation region the network depends on theta only through
  phi_j = u_j v_j^T, j = 1..r (the reparametrisation of Marcotte et al. 2023).

An arbitrary F enters through its jet at a base point c of the product space,
F(z) = f0 + g.(z - c) + (z - c)^T K (z - c)/2 + T[z - c, z - c, z - c]/6, with independent
symbols (c, g, K, T); after differentiating in theta, c is replaced by phi(theta). An
identity at theta that involves F only through its first three derivatives at phi(theta)
then holds for every C^3 loss F, because (g, K, T) are arbitrary there.

Parameters are stacked row-major: theta = (U[0, 0], U[0, 1], ..., V[0, 0], ...).

>>> mf = mf_model(2, 2, 1)
>>> len(mf.theta), len(mf.phi), sorted(mf.laws)
(4, 4, ['Psi_0_0'])
>>> mf.laws['Psi_0_0']
U_0_0**2 + U_1_0**2 - V_0_0**2 - V_1_0**2
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import sympy as sp
from sympy.polys.domains import QQ
from sympy.polys.rings import PolyElement, PolyRing

from ..memo import memo

eta = sp.Symbol("eta", positive=True)  # learning rate


# --- exact polynomial arithmetic ---------------------------------------------------------------------------
# Every quantity of these models is a polynomial over Q in its symbols (parameters, jet coefficients, Sigma,
# eta). Sums, products, derivatives and substitutions are done in a sparse polynomial ring over Q
# (sympy.polys.rings) and converted back: the result is the expanded polynomial that sp.expand returns (the
# same canonical SymPy expression), without SymPy's generic expression tree. An expression that is not a
# polynomial over Q (a square root, a function, a float) makes _poly raise _NotPolynomial, and the callers
# fall back to the generic path.


class _NotPolynomial(ValueError):
    """The expression is not a polynomial over Q in its symbols."""


def _ring(*exprs) -> PolyRing:
    """The polynomial ring over Q in every symbol of ``exprs`` (expressions, matrices or iterables of them)."""
    syms: set = set()
    for e in exprs:
        if isinstance(e, sp.Basic) or isinstance(e, sp.MatrixBase):
            syms |= e.free_symbols
        else:
            for x in e:
                syms |= sp.sympify(x).free_symbols
    return PolyRing(tuple(sorted(syms, key=sp.default_sort_key)), QQ)


def _poly(R: PolyRing, expr) -> PolyElement:
    """``expr`` as an element of ``R`` (expanded by ring arithmetic); _NotPolynomial when it is not one."""
    index = {s: i for i, s in enumerate(R.symbols)}
    gens = R.gens

    def rebuild(e):
        i = index.get(e)
        if i is not None:
            return gens[i]
        if e.is_Add:
            return _sum(R, (rebuild(a) for a in e.args))
        if e.is_Mul:
            out = R.one
            for a in e.args:
                out = out * rebuild(a)
            return out
        if e.is_Pow and e.exp.is_Integer and e.exp > 0:
            return rebuild(e.base) ** int(e.exp)
        if e.is_Rational:
            return R.ground_new(QQ(int(e.p), int(e.q)))
        raise _NotPolynomial(f"not a polynomial over Q: {e}")

    return rebuild(sp.sympify(expr))


def _compose(p: PolyElement, values: Mapping[int, PolyElement]) -> PolyElement:
    """``p`` with the generators of index ``i`` replaced by ``values[i]`` (simultaneously), expanded."""
    R = p.ring
    idx = sorted(values)
    powers: dict = {}

    def image(monom, coeff) -> PolyElement:
        rest = list(monom)
        term = R.one
        for i in idx:
            k = monom[i]
            if k:
                rest[i] = 0
                key = (i, k)
                if key not in powers:
                    powers[key] = values[i] ** k
                term = term * powers[key]
        return term.mul_term((tuple(rest), coeff))

    return _sum(R, (image(monom, coeff) for monom, coeff in p.items()))


def _sum(R: PolyRing, polys) -> PolyElement:
    """The sum of ring elements, accumulated in one dictionary."""
    acc: dict = {}
    for q in polys:
        for m, c in q.items():
            v = acc.get(m, QQ.zero) + c
            if v:
                acc[m] = v
            else:
                acc.pop(m, None)
    out = R.zero
    out.update(acc)
    return out


def _directional_poly(p: PolyElement, theta: Sequence[PolyElement], direction: Sequence[PolyElement]):
    """D_direction p = sum_i direction_i dp/dtheta_i in the ring (theta: generators)."""
    return _sum(p.ring, (d * p.diff(t) for t, d in zip(theta, direction) if d))


def _hessian_poly(p: PolyElement, theta: Sequence[PolyElement]) -> list[list[PolyElement]]:
    """The Hessian of ``p`` in the generators ``theta`` (symmetric; each entry differentiated once)."""
    first = [p.diff(t) for t in theta]
    n = len(theta)
    H = [[None] * n for _ in range(n)]
    for i in range(n):
        for j in range(i, n):
            H[i][j] = H[j][i] = first[i].diff(theta[j])
    return H


def _pairing_poly(H: Sequence[Sequence[PolyElement]], ds: Iterable[Sequence[PolyElement]]) -> PolyElement:
    """sum_k d_k^T H d_k (= <H, Sigma> for Sigma = sum_k d_k d_k^T) for ring elements H[i][j], d_k[i]."""
    n = len(H)
    return _sum(H[0][0].ring, (d[i] * H[i][j] * d[j] for d in ds for i in range(n) for j in range(n) if d[i] and d[j]))


def pairing(H: sp.Matrix, deltas: Iterable[tuple[sp.Matrix, sp.Matrix]]) -> sp.Expr:
    """<H, Sigma> = sum_k delta_k^T H delta_k for Sigma = sum_k delta_k delta_k^T, delta_k = vec(dU_k, dV_k), expanded.

    >>> u, v, a, b = sp.symbols('u v a b', real=True)
    >>> pairing(hessian((u * v - 1)**2 / 2, (u, v)), [(sp.Matrix([[a]]), sp.Matrix([[b]]))])
    a**2*v**2 + 4*a*b*u*v - 2*a*b + b**2*u**2
    """
    vecs = [vec(dU, dV) for dU, dV in deltas]
    try:
        R = _ring(H, *vecs)
        Hp = [[_poly(R, H[i, j]) for j in range(H.shape[1])] for i in range(H.shape[0])]
        ds = [[_poly(R, x) for x in d] for d in vecs]
    except _NotPolynomial:
        total = sp.Integer(0)
        for d in vecs:
            total += (d.T * H * d)[0]
        return sp.expand(total)
    return _pairing_poly(Hp, ds).as_expr()


def _loss_pairing(
    loss: sp.Expr, theta: Sequence[sp.Basic], deltas: Iterable[tuple[sp.Matrix, sp.Matrix]], *extra
) -> tuple[PolyRing, list[PolyElement], PolyElement]:
    """(R, theta as generators of R, <H, Sigma>) for the Hessian H of a polynomial ``loss`` in ``theta``.

    R: the ring over Q in the symbols of ``loss``, ``theta``, the samples and ``extra``; Sigma as in :func:`pairing`.
    """
    vecs = [vec(dU, dV) for dU, dV in deltas]
    R = _ring(loss, theta, *vecs, *extra)
    gens = [_poly(R, t) for t in theta]
    H = _hessian_poly(_poly(R, loss), gens)
    return R, gens, _pairing_poly(H, [[_poly(R, x) for x in d] for d in vecs])


def _expand(expr) -> sp.Expr:
    """sp.expand(expr), by ring arithmetic when ``expr`` is a polynomial over Q (the same expression).

    >>> u, v = sp.symbols('u v', real=True)
    >>> _expand((u - v) * (u + v) / 2), _expand(sp.sqrt(u) * (u + 1))
    (u**2/2 - v**2/2, u**(3/2) + sqrt(u))
    """
    try:
        return _poly(_ring(expr), expr).as_expr()
    except _NotPolynomial:
        return sp.expand(expr)


def _expand_matrix(M: sp.MatrixBase) -> sp.Matrix:
    """M.applyfunc(sp.expand) through :func:`_expand`."""
    return sp.Matrix(M.shape[0], M.shape[1], lambda i, j: _expand(M[i, j]))


def matrix_symbols(name: str, rows: int, cols: int) -> sp.Matrix:
    """A rows x cols matrix of real symbols ``name_i_j``.

    >>> matrix_symbols('U', 1, 2)
    Matrix([[U_0_0, U_0_1]])
    """
    return sp.Matrix(rows, cols, lambda i, j: sp.Symbol(f"{name}_{i}_{j}", real=True))


def symmetric_symbols(name: str, size: int) -> sp.Matrix:
    """A symmetric size x size matrix of real symbols ``name_i_j`` (i <= j).

    >>> symmetric_symbols('A', 2)
    Matrix([
    [A_0_0, A_0_1],
    [A_0_1, A_1_1]])
    """
    return sp.Matrix(size, size, lambda i, j: sp.Symbol(f"{name}_{min(i, j)}_{max(i, j)}", real=True))


def vec(*mats: sp.Matrix) -> sp.Matrix:
    """Row-major entries of the matrices, stacked into one column.

    >>> vec(sp.Matrix([[1, 2]]), sp.Matrix([[3], [4]])).T
    Matrix([[1, 2, 3, 4]])
    """
    return sp.Matrix([x for M in mats for x in M])


def gradient(expr: sp.Expr, theta: Iterable[sp.Basic]) -> sp.Matrix:
    """The gradient of ``expr`` in ``theta`` as a column."""
    return sp.Matrix([sp.diff(expr, t) for t in theta])


def directional(expr: sp.Expr, theta: Iterable[sp.Basic], direction: Iterable[sp.Expr]) -> sp.Expr:
    """D_direction expr = sum_i direction_i d expr / d theta_i, expanded.

    Polynomials over Q are differentiated in a polynomial ring (exact); anything else by SymPy.

    >>> u, v = sp.symbols('u v', real=True)
    >>> directional((u + v)**2, (u, v), (v, -u))
    -2*u**2 + 2*v**2
    >>> directional(sp.sin(u) * v, (u, v), (1, 0))
    v*cos(u)
    """
    theta, direction = list(theta), list(direction)
    try:
        R = _ring(expr, theta, direction)
        p = _poly(R, expr)
        dirs = [_poly(R, d) for d in direction]
        gens = [_poly(R, t) for t in theta]
        if any(not g.is_generator for g in gens):
            raise _NotPolynomial("theta must be symbols")
    except _NotPolynomial:
        return sp.expand(sum((d * sp.diff(expr, t) for t, d in zip(theta, direction)), sp.Integer(0)))
    return _directional_poly(p, gens, dirs).as_expr()


@dataclass(frozen=True)
class Model:
    """A model through its reparametrisation: parameters, blocks, products phi and its laws."""

    name: str
    theta: tuple
    blocks: dict
    phi: tuple
    laws: dict = field(default_factory=dict)

    @property
    def dim(self) -> int:
        """D, the number of parameters."""
        return len(self.theta)


def scalar_model() -> Model:
    """theta = (u, v), phi = u v, law h = u^2 - v^2 (Section 2, the case r = 1; Appendix B).

    >>> scalar_model().laws
    {'h': u**2 - v**2}
    """
    u, v = sp.symbols("u v", real=True)
    return Model("scalar", (u, v), {"u": u, "v": v}, (u * v,), {"h": u**2 - v**2})


def psi(U: sp.Matrix, V: sp.Matrix) -> sp.Matrix:
    """Psi = U^T U - V^T V in Sym(r) (Section 2)."""
    return U.T * U - V.T * V


def psi_A(U: sp.Matrix, V: sp.Matrix, A: sp.Matrix) -> sp.Expr:
    """Psi_A = <A, Psi> = tr(A Psi) for A in Sym(r) (Section 2, Eq. (1))."""
    return sp.expand((A * psi(U, V)).trace())


def mf_model(n: int, m: int, r: int) -> Model:
    """Two-layer matrix factorisation: phi = U V^T, laws the entries Psi_ij (i <= j) of Psi."""
    U, V = matrix_symbols("U", n, r), matrix_symbols("V", m, r)
    P = psi(U, V)
    laws = {f"Psi_{i}_{j}": sp.expand(P[i, j]) for i in range(r) for j in range(i, r)}
    return Model(f"mf({n},{m},{r})", tuple(vec(U, V)), {"U": U, "V": V}, tuple(U * V.T), laws)


def relu_model(n: int, d: int, r: int) -> Model:
    """Two-layer ReLU in a fixed region: phi_j = u_j v_j^T (u_j, v_j columns of U, V), laws h_j.

    >>> relu_model(1, 2, 2).laws['h_1']
    U_0_1**2 - V_0_1**2 - V_1_1**2
    """
    U, V = matrix_symbols("U", n, r), matrix_symbols("V", d, r)
    phi = tuple(x for j in range(r) for x in U[:, j] * V[:, j].T)
    laws = {f"h_{j}": sp.expand((U[:, j].T * U[:, j])[0] - (V[:, j].T * V[:, j])[0]) for j in range(r)}
    return Model(f"relu({n},{d},{r})", tuple(vec(U, V)), {"U": U, "V": V}, phi, laws)


def generator(U: sp.Matrix, V: sp.Matrix, A: sp.Matrix) -> sp.Matrix:
    """Delta_A(U, V) = (U A, -V A^T), the generator of T_A(eps) = (U e^{eps A}, V e^{-eps A^T}) (Section 2)."""
    return vec(U * A, -V * A.T)


def phi_along_generator(n: int, m: int, r: int) -> sp.Matrix:
    """dphi(theta) Delta_A for a general A in R^{r x r}: the zero matrix (U V^T is invariant).

    >>> phi_along_generator(2, 3, 2)
    Matrix([
    [0, 0, 0],
    [0, 0, 0]])
    """
    model = mf_model(n, m, r)
    U, V = model.blocks["U"], model.blocks["V"]
    A = matrix_symbols("A", r, r)
    delta = generator(U, V, A)
    return sp.Matrix(n, m, lambda i, j: directional(model.phi[i * m + j], model.theta, delta))


def transformation_series(n: int, m: int, r: int, order: int) -> sp.Matrix:
    """phi(T_A(eps)) - U V^T with e^{eps A} truncated after eps^order, kept to O(eps^order).

    The truncation error is O(eps^(order+1)), so a zero result proves that every Taylor
    coefficient of eps -> U e^{eps A} e^{-eps A} V^T beyond the constant vanishes up to ``order``.

    >>> transformation_series(1, 1, 2, 4)
    Matrix([[0]])
    """
    eps = sp.Symbol("epsilon")
    U, V, A = matrix_symbols("U", n, r), matrix_symbols("V", m, r), matrix_symbols("A", r, r)

    def expm_series(M):
        term, total = sp.eye(r), sp.eye(r)
        for k in range(1, order + 1):
            term = term * M * eps / k
            total += term
        return total

    diff = (U * expm_series(A)) * (V * expm_series(-A.T)).T - U * V.T
    R = _ring(diff, [eps])
    e = R.index(_poly(R, eps))

    def truncate(expr):
        p = _poly(R, expr)  # expanded exactly
        out = R.zero
        out.update({m: c for m, c in p.items() if m[e] <= order})
        return out.as_expr()

    return diff.applyfunc(truncate)


def _solve_for_A(eqs, A: sp.Matrix) -> list[sp.Matrix]:
    """A basis of the solutions A of the linear equations ``eqs``."""
    eqs = [e for e in eqs if e != 0]
    sol = sp.solve(eqs, list(A), dict=True) if eqs else [{}]
    (sol,) = sol
    Asol = A.subs(sol)
    free = sorted(Asol.free_symbols, key=str)
    return [Asol.subs({f: int(f == g) for f in free}) for g in free]


def gradient_field_algebra(n: int, m: int, r: int) -> list[sp.Matrix]:
    """The A in R^{r x r} for which Delta_A is a gradient field: a basis of the solution space.

    Delta_A is linear in theta, Delta_A(theta) = J_A theta, and a linear field on R^D is a
    gradient exactly when J_A is symmetric (then it is grad of theta^T J_A theta / 2). The
    linear equations J_A = J_A^T are solved for the entries of A.

    >>> len(gradient_field_algebra(2, 2, 2)), all(B.is_symmetric() for B in gradient_field_algebra(2, 2, 2))
    (3, True)
    """
    U, V, A = matrix_symbols("U", n, r), matrix_symbols("V", m, r), matrix_symbols("A", r, r)
    theta = list(vec(U, V))
    J = generator(U, V, A).jacobian(theta)
    return _solve_for_A(list(J - J.T), A)


@dataclass(frozen=True)
class Jet:
    """A loss F of the product through its jet at the base point c (see the module docstring).

    ``F_z`` is the jet as a polynomial in the product coordinates ``z``; ``loss`` is
    F(phi(theta)); ``base`` maps c -> phi(theta) (apply it after differentiating in theta);
    ``grad`` and ``hess`` are grad F and grad^2 F at the base point.
    """

    loss: sp.Expr
    base: dict
    grad: sp.Matrix
    hess: sp.Matrix
    z: tuple
    F_z: sp.Expr

    def dF(self, a: int) -> sp.Expr:
        """(d_a F)(phi(theta)) as a function of theta (base c still symbolic)."""
        phi = list(self.base.values())
        try:
            R = _ring(self.F_z, self.z, phi)
            F = _poly(R, self.F_z)
            z = [_poly(R, zi) for zi in self.z]
            at_phi = {R.index(zi): _poly(R, p) for zi, p in zip(z, phi)}
        except _NotPolynomial:
            return sp.expand(sp.diff(self.F_z, self.z[a]).subs(dict(zip(self.z, phi)), simultaneous=True))
        return _compose(F.diff(z[a]), at_phi).as_expr()


class _JetRing:
    """A jet's loss in a polynomial ring over Q with the parameters, Sigma and eta (for the rates below).

    ``loss`` is F(phi(theta)) with the base c still symbolic, ``theta`` the parameters as generators,
    ``at_base`` the substitution c -> phi(theta) (for :func:`_compose`).
    """

    def __init__(self, jet: Jet, theta: Sequence[sp.Basic], *extra):
        self.R = R = _ring(jet.loss, theta, list(jet.base), list(jet.base.values()), [eta], *extra)
        self.loss = _poly(R, jet.loss)
        self.theta = [_poly(R, t) for t in theta]
        self.at_base = {R.index(_poly(R, c)): _poly(R, p) for c, p in jet.base.items()}
        self.eta = _poly(R, eta)

    def poly(self, expr) -> PolyElement:
        return _poly(self.R, expr)

    def pairing(self, Sigma: sp.Matrix) -> PolyElement:
        """<H, Sigma> = tr(H Sigma) of the loss (Sigma symmetric)."""
        H = _hessian_poly(self.loss, self.theta)
        S = [[self.poly(Sigma[i, j]) for j in range(Sigma.shape[1])] for i in range(Sigma.shape[0])]
        n = len(self.theta)
        return _sum(self.R, (H[i][j] * S[j][i] for i in range(n) for j in range(n)))

    def velocity(self, pairing: PolyElement) -> list[PolyElement]:
        """theta' = -eta grad L - (eta/2) grad <H, Sigma>."""
        half = QQ(1, 2)
        return [-self.eta * (self.loss.diff(t) + pairing.diff(t) * half) for t in self.theta]


def generic_loss(phi: Sequence[sp.Expr], order: int = 2, name: str = "F") -> Jet:
    """L = F(phi) for an arbitrary F, as a jet of ``order`` (1, 2 or 3) at the base c.

    Apply ``.base`` (c -> phi(theta)) after differentiating in theta.

    >>> u, v = sp.symbols('u v', real=True)
    >>> jet = generic_loss((u * v,), order=2)
    >>> sp.expand(sp.diff(jet.loss, u).subs(jet.base))
    F_g0*v
    """
    if order not in (1, 2, 3):
        raise ValueError(f"order must be 1, 2 or 3; got {order!r}")
    k = len(phi)
    c = sp.symbols(f"{name}_c0:{k}", real=True)
    zs = sp.symbols(f"{name}_z0:{k}", real=True)
    g = sp.Matrix(sp.symbols(f"{name}_g0:{k}", real=True))
    K = symmetric_symbols(f"{name}_K", k)
    w = sp.Matrix([zi - ci for zi, ci in zip(zs, c)])
    F_z = sp.Symbol(f"{name}_0", real=True) + (g.T * w)[0]
    if order >= 2:
        F_z += (w.T * K * w)[0] / 2
    if order == 3:
        for idx in itertools.combinations_with_replacement(range(k), 3):
            t = sp.Symbol(f"{name}_T_{'_'.join(map(str, idx))}", real=True)
            mult = len(set(itertools.permutations(idx)))
            F_z += t * mult * w[idx[0]] * w[idx[1]] * w[idx[2]] / 6
    try:
        R = _ring(F_z, phi)
        F = _poly(R, F_z)
        at_phi = {R.index(_poly(R, zi)): _poly(R, p) for zi, p in zip(zs, phi)}
    except _NotPolynomial:
        F_z = sp.expand(F_z)
        loss = sp.expand(F_z.subs(dict(zip(zs, phi)), simultaneous=True))
        return Jet(loss, dict(zip(c, phi)), g, K, zs, F_z)
    return Jet(_compose(F, at_phi).as_expr(), dict(zip(c, phi)), g, K, zs, F.as_expr())


def gradient_flow_rate(model: Model, law: str, order: int = 1) -> sp.Expr:
    """d(law)/dt along gradient flow theta' = -grad L, L = F(phi) with F arbitrary (Section 2).

    Zero for a conservation law: its gradient is orthogonal to W_phi.

    >>> gradient_flow_rate(scalar_model(), 'h')
    0
    """
    jet = generic_loss(model.phi, order=order)
    J = _JetRing(jet, model.theta, model.laws[law])
    h = J.poly(model.laws[law])
    rate = _sum(J.R, (h.diff(t) * _compose(J.loss.diff(t), J.at_base) for t in J.theta))
    return (-rate).as_expr()


def hessian(expr: sp.Expr, theta: Iterable[sp.Basic]) -> sp.Matrix:
    """The Hessian of ``expr`` in ``theta`` (entries expanded when ``expr`` is a polynomial over Q).

    >>> u, v = sp.symbols('u v', real=True)
    >>> hessian((u * v - 1)**2 / 2, (u, v))
    Matrix([
    [     v**2, 2*u*v - 1],
    [2*u*v - 1,      u**2]])
    """
    theta = list(theta)
    try:
        R = _ring(expr, theta)
        p = _poly(R, expr)
        gens = [_poly(R, t) for t in theta]
        if any(not g.is_generator for g in gens):
            raise _NotPolynomial("theta must be symbols")
    except _NotPolynomial:
        return sp.hessian(expr, theta)
    H = _hessian_poly(p, gens)
    return sp.Matrix(len(theta), len(theta), lambda i, j: H[i][j].as_expr())


def hessian_split(model: Model, order: int = 2) -> tuple[sp.Matrix, sp.Matrix, sp.Matrix]:
    """(H, H_p, H_c) for L = F(phi) with F arbitrary: H_p = dphi^T (grad^2 F) dphi, H_c = sum_a (d_a F) grad^2 phi_a.

    Section 3: H = H_p + H_c (the chain rule). H is the Hessian of the jet, taken at c = phi(theta).

    >>> H, Hp, Hc = hessian_split(scalar_model())
    >>> sp.expand(H - Hp - Hc) == sp.zeros(2, 2)
    True
    """
    jet = generic_loss(model.phi, order=order)
    J = _JetRing(jet, model.theta, jet.hess, jet.grad)
    n = len(J.theta)
    H = _hessian_poly(J.loss, J.theta)
    phi = [J.poly(p) for p in model.phi]
    dphi = [[p.diff(t) for t in J.theta] for p in phi]  # rows: grad phi_a
    K = [[J.poly(jet.hess[a, b]) for b in range(len(phi))] for a in range(len(phi))]
    g = [J.poly(ga) for ga in jet.grad]
    hess_phi = [_hessian_poly(p, J.theta) for p in phi]
    rng = range(len(phi))

    def hp(i, j):
        return _sum(J.R, (dphi[a][i] * K[a][b] * dphi[b][j] for a in rng for b in rng))

    def hc(i, j):
        return _sum(J.R, (g[a] * hess_phi[a][i][j] for a in rng))

    return (
        sp.Matrix(n, n, lambda i, j: _compose(H[i][j], J.at_base).as_expr()),
        sp.Matrix(n, n, lambda i, j: hp(i, j).as_expr()),
        sp.Matrix(n, n, lambda i, j: hc(i, j).as_expr()),
    )


def central_flow_velocity(loss: sp.Expr, theta: Sequence[sp.Basic], Sigma: sp.Matrix) -> sp.Matrix:
    """theta' = -eta grad L - (eta/2) grad_theta <H(theta), Sigma> with Sigma held fixed (Section 3).

    Entries expanded when L and Sigma are polynomials over Q.

    >>> u, v = sp.symbols('u v', real=True)
    >>> central_flow_velocity((u * v - 1)**2 / 2, (u, v), sp.eye(2)).T
    Matrix([[-eta*u*v**2 - eta*u + eta*v, -eta*u**2*v + eta*u - eta*v]])
    """
    theta = list(theta)
    try:
        R = _ring(loss, theta, Sigma, [eta])
        p = _poly(R, loss)
        gens = [_poly(R, t) for t in theta]
        if any(not g.is_generator for g in gens):
            raise _NotPolynomial("theta must be symbols")
        S = [[_poly(R, Sigma[i, j]) for j in range(Sigma.shape[1])] for i in range(Sigma.shape[0])]
    except _NotPolynomial:
        H = hessian(loss, theta)
        pairing = sp.expand((H * Sigma).trace())
        return -eta * gradient(loss, theta) - eta / 2 * gradient(pairing, theta)
    H = _hessian_poly(p, gens)
    n = len(gens)
    pairing = _sum(R, (H[i][j] * S[j][i] for i in range(n) for j in range(n)))
    E, half = _poly(R, eta), QQ(1, 2)
    return sp.Matrix([(-E * (p.diff(t) + pairing.diff(t) * half)).as_expr() for t in gens])


def central_flow_law_rate(model: Model, law: str, order: int = 3) -> tuple[sp.Expr, sp.Expr]:
    """(direct, paper): d(law)/dt = <grad law, theta'> along the central flow, and -(eta/2) D_{grad law}<H, Sigma>.

    Section 3: the two agree for a gradient-flow law because <grad law, grad L> = 0. F is an
    arbitrary loss of the product (jet of ``order``, 3 reaches grad^3 F in grad <H, Sigma>)
    and Sigma a general symmetric matrix of symbols.

    >>> direct, paper = central_flow_law_rate(scalar_model(), 'h')
    >>> sp.expand(direct - paper)
    0
    """
    jet = generic_loss(model.phi, order=order)
    Sigma = symmetric_symbols("Sigma", len(model.theta))
    J = _JetRing(jet, model.theta, Sigma, model.laws[law])
    h = J.poly(model.laws[law])
    g_law = [h.diff(t) for t in J.theta]
    pairing = J.pairing(Sigma)
    velocity = J.velocity(pairing)
    direct = _compose(_sum(J.R, (gl * v for gl, v in zip(g_law, velocity))), J.at_base)
    paper = _compose(-J.eta * QQ(1, 2) * _directional_poly(pairing, J.theta, g_law), J.at_base)
    return direct.as_expr(), paper.as_expr()


def central_flow_psi_rate(n: int, m: int, r: int, order: int = 3) -> tuple[sp.Expr, sp.Expr]:
    """(direct, paper): Psi_A' = <grad Psi_A, theta'> along the central flow, and -eta D_{Delta_A} <H, Sigma>.

    Section 3, for MF with A in Sym(r) symbolic, an arbitrary F (jet of ``order``) and a
    general symmetric Sigma; uses grad Psi_A = 2 Delta_A.

    >>> direct, paper = central_flow_psi_rate(1, 1, 1)
    >>> sp.expand(direct - paper)
    0
    """
    model = mf_model(n, m, r)
    U, V = model.blocks["U"], model.blocks["V"]
    A = symmetric_symbols("A", r)
    jet = generic_loss(model.phi, order=order)
    Sigma = symmetric_symbols("Sigma", len(model.theta))
    J = _JetRing(jet, model.theta, Sigma, A)
    psiA = J.poly(psi_A(U, V, A))
    pairing = J.pairing(Sigma)
    velocity = J.velocity(pairing)
    direct = _compose(_sum(J.R, (psiA.diff(t) * v for t, v in zip(J.theta, velocity))), J.at_base)
    delta = [J.poly(d) for d in generator(U, V, A)]
    paper = _compose(-J.eta * _directional_poly(pairing, J.theta, delta), J.at_base)
    return direct.as_expr(), paper.as_expr()


# --- the number of laws: the Lie algebra generated by W_phi (Marcotte et al. 2023) -----------------


class _Echelon:
    """Incremental exact row echelon form over Q of sparse vectors (dict key -> Fraction)."""

    def __init__(self):
        self.rows: list[tuple[object, dict]] = []

    def add(self, vec_: dict) -> bool:
        """Reduce ``vec_`` by the stored rows; store it and return True when it is independent."""
        v = {k: c for k, c in vec_.items() if c != 0}
        for pivot, row in self.rows:
            c = v.get(pivot)
            if c:
                for k, rc in row.items():
                    nv = v.get(k, 0) - c * rc
                    if nv:
                        v[k] = nv
                    else:
                        v.pop(k, None)
        if not v:
            return False
        pivot = min(v, key=repr)
        lead = v[pivot]
        self.rows.append((pivot, {k: c / lead for k, c in v.items()}))
        return True

    @property
    def rank(self) -> int:
        return len(self.rows)


def _frac(c) -> Fraction:
    return Fraction(int(c.numerator), int(c.denominator))


def _poly_field(exprs, R: PolyRing) -> tuple:
    """A polynomial vector field as a tuple of elements of R = Q[theta]."""
    return tuple(_poly(R, e) for e in exprs)


def _field_key(field_) -> dict:
    return {(i, mon): _frac(c) for i, p in enumerate(field_) for mon, c in p.items() if c}


def _jacobian(X: tuple, R: PolyRing) -> list[list[PolyElement]]:
    """dX_i/dtheta_j for a polynomial field X over R = Q[theta]."""
    return [[Xi.diff(g) for g in R.gens] for Xi in X]


def _bracket(X: tuple, Y: tuple, R: PolyRing, JX: list | None = None, JY: list | None = None) -> tuple:
    """[X, Y]_i = sum_j X_j dY_i/dtheta_j - Y_j dX_i/dtheta_j (JX, JY: the fields' Jacobians, if known)."""
    JX = _jacobian(X, R) if JX is None else JX
    JY = _jacobian(Y, R) if JY is None else JY
    n = len(R.gens)
    return tuple(
        _sum(
            R,
            [X[j] * JY[i][j] for j in range(n) if X[j] and JY[i][j]]
            + [-Y[j] * JX[i][j] for j in range(n) if Y[j] and JX[i][j]],
        )
        for i in range(len(X))
    )


def _field_at(f: tuple, values: Sequence) -> list[Fraction]:
    """The field's components at theta = ``values`` (rationals), exactly."""
    vals = [QQ(int(sp.Rational(v).p), int(sp.Rational(v).q)) for v in values]
    out = []
    for p in f:
        acc = QQ.zero
        for mon, c in p.items():
            term = c
            for v, k in zip(vals, mon):
                if k:
                    term *= v**k
            acc += term
        out.append(_frac(acc))
    return out


_LIE_CACHE: dict[str, list[tuple]] = {}


def lie_algebra(model: Model, max_depth: int = 20) -> list[tuple]:
    """A basis of Lie(W_phi) as polynomial vector fields, W_phi = span{grad phi_a} (Marcotte et al. 2023).

    Right-nested brackets [g1, [g2, ..., gk]] of the generators span the generated algebra;
    level k brackets each generator with the new independent fields of level k - 1 (by
    bilinearity the dependent ones add nothing). The closure is exact over Q (fields are
    compared by their coefficient vectors) and stops when a level adds nothing.

    >>> len(lie_algebra(scalar_model()))
    1
    """
    if model.name in _LIE_CACHE:
        return _LIE_CACHE[model.name]
    R = PolyRing(tuple(model.theta), QQ)
    generators = [_poly_field(gradient(p, model.theta), R) for p in model.phi]
    jac_gen = [_jacobian(X, R) for X in generators]
    ech = _Echelon()
    basis, frontier = [], []
    for f in generators:
        if ech.add(_field_key(f)):
            basis.append(f)
            frontier.append(f)
    depth = 1
    while frontier:
        depth += 1
        if depth > max_depth:
            raise RuntimeError(f"Lie algebra of {model.name} did not close within {max_depth} bracket levels")
        new = []
        jac_front = [_jacobian(Y, R) for Y in frontier]
        for X, JX in zip(generators, jac_gen):
            for Y, JY in zip(frontier, jac_front):
                Z = _bracket(X, Y, R, JX, JY)
                if ech.add(_field_key(Z)):
                    new.append(Z)
        basis.extend(new)
        frontier = new
    _LIE_CACHE[model.name] = basis
    return basis


def generic_point(model: Model, seed: int) -> dict:
    """A rational point theta (denominators up to 7, numerators in [-9, 9], nonzero): generic for these models."""
    rng = random.Random(seed)
    vals = {}
    for t in model.theta:
        num = 0
        while num == 0:
            num = rng.randint(-9, 9)
        vals[t] = sp.Rational(num, rng.randint(1, 7))
    return vals


def lie_dimension_at(model: Model, point: dict) -> int:
    """dim Lie(W_phi)(theta) at ``point``: the rank over Q of the algebra's fields evaluated there."""
    ech = _Echelon()
    values = [point[g] for g in model.theta]
    for f in lie_algebra(model):
        ech.add(dict(enumerate(_field_at(f, values))))
    return ech.rank


def number_of_laws(model: Model, point: dict) -> int:
    """N_GF(theta) = D - dim Lie(W_phi)(theta) (Marcotte et al. 2023; Section 1).

    >>> m = mf_model(2, 2, 2)
    >>> number_of_laws(m, generic_point(m, 0))
    3
    """
    return model.dim - lie_dimension_at(model, point)


def laws_rank_at(model: Model, point: dict) -> int:
    """The number of locally independent laws among ``model.laws``: rank of their gradients at ``point``."""
    grads = [gradient(h, model.theta).subs(point) for h in model.laws.values()]
    return sp.Matrix.hstack(*grads).rank() if grads else 0


def laws_orthogonal_to_algebra(model: Model, point: dict) -> bool:
    """True when every law's gradient at ``point`` is orthogonal to every field of Lie(W_phi) there."""
    gens = list(model.theta)
    values = [point[g] for g in gens]
    fields = [
        sp.Matrix([sp.Rational(v.numerator, v.denominator) for v in _field_at(f, values)]) for f in lie_algebra(model)
    ]
    grads = [gradient(h, gens).subs(point) for h in model.laws.values()]
    return all((g.T * f)[0] == 0 for g in grads for f in fields)


def n_gf_formula(r: int, rk: int) -> sp.Integer:
    """The paper's count for MF with (U; V) of rank rk: N_GF = rk (2r + 1 - rk) / 2 (Section 2).

    >>> n_gf_formula(2, 2), n_gf_formula(3, 2)
    (3, 5)
    """
    return sp.Integer(rk * (2 * r + 1 - rk)) / 2


@memo
def relu_admissible_generators(n: int, d: int, r: int) -> list[sp.Matrix]:
    """Basis of {A in R^{r x r} : dphi_ReLU(theta) Delta_A(theta) = 0 for every theta}.

    Section 2: within the matrix family the admissible generators of the ReLU network are
    Diag(r). The directional derivatives are polynomials in theta; every coefficient must vanish.

    >>> [list(B) for B in relu_admissible_generators(1, 2, 2)]
    [[1, 0, 0, 0], [0, 0, 0, 1]]
    """
    model = relu_model(n, d, r)
    U, V = model.blocks["U"], model.blocks["V"]
    A = matrix_symbols("A", r, r)
    delta = generator(U, V, A)
    eqs = []
    for p in model.phi:
        expr = directional(p, model.theta, delta)
        if expr != 0:
            eqs.extend(sp.Poly(expr, *model.theta).coeffs())
    return _solve_for_A(eqs, A)


def relu_kernel_generators_at(n: int, d: int, r: int, seed: int = 0) -> list[sp.Matrix]:
    """Basis of {A : dphi_ReLU(theta) Delta_A(theta) = 0} at one generic rational theta (pointwise kernel).

    Pointwise the kernel can exceed Diag(r) when n < r and d < r (the u_j, resp. v_j, are then
    linearly dependent); it equals Diag(r) when max(n, d) >= r.

    >>> len(relu_kernel_generators_at(1, 3, 3)), len(relu_kernel_generators_at(2, 2, 3))
    (3, 4)
    """
    model = relu_model(n, d, r)
    U, V = model.blocks["U"], model.blocks["V"]
    A = matrix_symbols("A", r, r)
    delta = generator(U, V, A)
    point = generic_point(model, seed)
    return _solve_for_A([directional(p, model.theta, delta).subs(point) for p in model.phi], A)


def invariance_lemma(D: int = 3, P: int = 2) -> dict[str, sp.Expr]:
    """Section 2's lemma for arbitrary smooth phi: R^D -> R^P, F, h and a one-parameter family T; residuals.

    T(eps, theta) = theta + eps Delta(theta) + eps^2 W(eps, theta) is the general C^2 family with
    T(0, theta) = theta (Hadamard's lemma; Delta, W arbitrary functions). Every returned residual
    expands to 0:

    - ``generator``: d/deps phi_a(T(eps, theta)) at eps = 0 minus (dphi Delta)_a, summed with
      independent weights c_a over a: the eps-derivative of phi(T) is dphi Delta, so an invariance
      phi(T(eps, .)) = phi gives dphi Delta = 0;
    - ``perp``: <Delta, dphi^T w> - <dphi Delta, w> for arbitrary w in R^P: so dphi Delta = 0 puts
      Delta in W_phi^perp, W_phi = range(dphi^T);
    - ``loss``: D_Delta F(phi(theta)) - <grad F(phi), dphi Delta>: the loss is invariant;
    - ``law``: d/dt h(theta) along theta' = -grad L, L = F(phi), plus <grad F(phi), dphi grad h>:
      with Delta = grad h and dphi Delta = 0, h is a gradient-flow conservation law.

    ``law_rate`` is the rate itself, nonzero for a generic h (the premise dphi grad h = 0 is needed).

    >>> sorted(k for k, e in invariance_lemma(2, 1).items() if k != 'law_rate' and e != 0)
    []
    """
    theta = sp.symbols(f"theta0:{D}", real=True)
    eps = sp.Symbol("epsilon", real=True)
    xi = sp.symbols(f"xi0:{P}", real=True)
    phi = [sp.Function(f"phi{a}")(*theta) for a in range(P)]
    Delta = [sp.Function(f"Delta{i}")(*theta) for i in range(D)]
    W = [sp.Function(f"W{i}")(eps, *theta) for i in range(D)]
    T = {t: t + eps * d + eps**2 * w for t, d, w in zip(theta, Delta, W)}
    J = sp.Matrix([[sp.diff(p, t) for t in theta] for p in phi])  # dphi, P x D
    Jd = J * sp.Matrix(Delta)
    c = sp.symbols(f"c0:{P}", real=True)
    gen = sp.Integer(0)
    for a, p in enumerate(phi):
        along = sp.diff(p.subs(T, simultaneous=True), eps).subs(eps, 0).doit()
        gen += c[a] * (along - Jd[a])
    w = sp.Matrix(sp.symbols(f"w0:{P}", real=True))
    perp = (sp.Matrix(Delta).T * (J.T * w))[0] - (Jd.T * w)[0]
    F = sp.Function("F")
    L = F(*phi)
    gradF = [sp.Subs(sp.Derivative(F(*xi), x), xi, phi).doit() for x in xi]
    loss_rate = sum((d * sp.diff(L, t) for t, d in zip(theta, Delta)), sp.Integer(0))
    loss_res = loss_rate - sum((g * e for g, e in zip(gradF, Jd)), sp.Integer(0))
    h = sp.Function("h")(*theta)
    grad_h = sp.Matrix([sp.diff(h, t) for t in theta])
    rate = sum((gh * (-sp.diff(L, t)) for gh, t in zip(grad_h, theta)), sp.Integer(0))
    Jh = J * grad_h
    law_res = rate + sum((g * e for g, e in zip(gradF, Jh)), sp.Integer(0))
    # expand is a proof here: each residual is a polynomial in the derivatives of the arbitrary functions
    # (atoms), and it vanishes identically iff its expansion is 0
    return {
        "generator": sp.expand(gen),
        "perp": sp.expand(perp),
        "loss": sp.expand(loss_res),
        "law": sp.expand(law_res),
        "law_rate": sp.expand(rate),
    }
