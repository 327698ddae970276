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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import sympy as sp

eta = sp.Symbol("eta", positive=True)  # learning rate


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
    """D_direction expr = sum_i direction_i d expr / d theta_i."""
    return sp.expand(sum((d * sp.diff(expr, t) for t, d in zip(theta, direction)), sp.Integer(0)))


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

    def truncate(e):
        poly = sp.Poly(sp.expand(e), eps)
        return sp.expand(sum((c * eps**k for (k,), c in poly.terms() if k <= order), sp.Integer(0)))

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
        return sp.expand(sp.diff(self.F_z, self.z[a]).subs(dict(zip(self.z, phi)), simultaneous=True))


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
    F_z = sp.expand(F_z)
    loss = sp.expand(F_z.subs(dict(zip(zs, phi)), simultaneous=True))
    return Jet(loss, dict(zip(c, phi)), g, K, zs, F_z)


def gradient_flow_rate(model: Model, law: str, order: int = 1) -> sp.Expr:
    """d(law)/dt along gradient flow theta' = -grad L, L = F(phi) with F arbitrary (Section 2).

    Zero for a conservation law: its gradient is orthogonal to W_phi.

    >>> gradient_flow_rate(scalar_model(), 'h')
    0
    """
    jet = generic_loss(model.phi, order=order)
    theta = model.theta
    g_law = gradient(model.laws[law], theta)
    g_loss = gradient(jet.loss, theta).subs(jet.base)
    return sp.expand(-(g_law.T * g_loss)[0])


def hessian(expr: sp.Expr, theta: Iterable[sp.Basic]) -> sp.Matrix:
    """The Hessian of ``expr`` in ``theta``."""
    return sp.hessian(expr, list(theta))


def hessian_split(model: Model, order: int = 2) -> tuple[sp.Matrix, sp.Matrix, sp.Matrix]:
    """(H, H_p, H_c) for L = F(phi) with F arbitrary: H_p = dphi^T (grad^2 F) dphi, H_c = sum_a (d_a F) grad^2 phi_a.

    Section 3: H = H_p + H_c (the chain rule). H is the Hessian of the jet, taken at c = phi(theta).

    >>> H, Hp, Hc = hessian_split(scalar_model())
    >>> sp.expand(H - Hp - Hc) == sp.zeros(2, 2)
    True
    """
    jet = generic_loss(model.phi, order=order)
    theta = list(model.theta)
    H = hessian(jet.loss, theta).subs(jet.base).applyfunc(sp.expand)
    J = sp.Matrix([list(gradient(p, theta)) for p in model.phi])
    Hp = (J.T * jet.hess * J).applyfunc(sp.expand)
    Hc = sp.zeros(len(theta), len(theta))
    for ga, p in zip(jet.grad, model.phi):
        Hc += ga * hessian(p, theta)
    return H, Hp, Hc.applyfunc(sp.expand)


def central_flow_velocity(loss: sp.Expr, theta: Sequence[sp.Basic], Sigma: sp.Matrix) -> sp.Matrix:
    """theta' = -eta grad L - (eta/2) grad_theta <H(theta), Sigma> with Sigma held fixed (Section 3)."""
    H = hessian(loss, theta)
    pairing = sp.expand((H * Sigma).trace())
    return -eta * gradient(loss, theta) - eta / 2 * gradient(pairing, theta)


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
    theta = list(model.theta)
    Sigma = symmetric_symbols("Sigma", len(theta))
    g_law = gradient(model.laws[law], theta)
    velocity = central_flow_velocity(jet.loss, theta, Sigma)
    direct = sp.expand((g_law.T * velocity)[0].subs(jet.base))
    pairing = sp.expand((hessian(jet.loss, theta) * Sigma).trace())
    paper = sp.expand((-eta / 2 * directional(pairing, theta, g_law)).subs(jet.base))
    return direct, paper


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
    theta = list(model.theta)
    Sigma = symmetric_symbols("Sigma", len(theta))
    velocity = central_flow_velocity(jet.loss, theta, Sigma)
    direct = sp.expand((gradient(psi_A(U, V, A), theta).T * velocity)[0].subs(jet.base))
    pairing = sp.expand((hessian(jet.loss, theta) * Sigma).trace())
    paper = sp.expand((-eta * directional(pairing, theta, generator(U, V, A))).subs(jet.base))
    return direct, paper


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


def _poly_field(exprs, gens) -> tuple:
    return tuple(sp.Poly(e, *gens, domain="QQ") for e in exprs)


def _field_key(field_) -> dict:
    return {(i, mon): _frac(c) for i, p in enumerate(field_) for mon, c in p.terms() if c}


def _bracket(X: tuple, Y: tuple, gens) -> tuple:
    """[X, Y]_i = sum_j X_j dY_i/dtheta_j - Y_j dX_i/dtheta_j."""
    out = []
    for Yi, Xi in zip(Y, X):
        acc = sp.Poly(0, *gens, domain="QQ")
        for j, g in enumerate(gens):
            acc += X[j] * Yi.diff(g) - Y[j] * Xi.diff(g)
        out.append(acc)
    return tuple(out)


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
    gens = list(model.theta)
    generators = [_poly_field(gradient(p, gens), gens) for p in model.phi]
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
        for X in generators:
            for Y in frontier:
                Z = _bracket(X, Y, gens)
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
    gens = list(model.theta)
    values = [point[g] for g in gens]
    for f in lie_algebra(model):
        ech.add({i: _frac(sp.Rational(p.eval(tuple(values)))) for i, p in enumerate(f)})
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
    values = tuple(point[g] for g in gens)
    fields = [sp.Matrix([sp.Rational(p.eval(values)) for p in f]) for f in lie_algebra(model)]
    grads = [gradient(h, gens).subs(point) for h in model.laws.values()]
    return all((g.T * f)[0] == 0 for g in grads for f in fields)


def n_gf_formula(r: int, rk: int) -> sp.Integer:
    """The paper's count for MF with (U; V) of rank rk: N_GF = rk (2r + 1 - rk) / 2 (Section 2).

    >>> n_gf_formula(2, 2), n_gf_formula(3, 2)
    (3, 5)
    """
    return sp.Integer(rk * (2 * r + 1 - rk)) / 2


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
    return {
        "generator": sp.expand(sp.simplify(gen)),
        "perp": sp.expand(perp),
        "loss": sp.expand(sp.simplify(loss_res)),
        "law": sp.expand(sp.simplify(law_res)),
        "law_rate": sp.expand(rate),
    }
