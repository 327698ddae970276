"""Symbols of the rare-gates model, declared once with their assumptions."""

import sympy as sp

t = sp.Symbol("t", nonnegative=True)  # angle between two hidden vectors, in [0, pi]
phi = sp.Symbol("phi", real=True)  # polar angle of the input
rho = sp.Symbol("rho", nonnegative=True)  # radius of the input
lam = sp.Symbol("lambda", positive=True)  # weight decay
omega, omega1, omega2 = sp.symbols("omega omega1 omega2", nonnegative=True)  # omega_i = a_i ||w_i||
a1, a2, r1, r2 = sp.symbols("a1 a2 r1 r2", positive=True)  # output weights, hidden norms
th1, th2 = sp.symbols("vartheta1 vartheta2", real=True)  # hidden-vector angles from e1
delta = sp.Symbol("delta", nonnegative=True)  # angle between the units
B = sp.Symbol("B", positive=True)  # clone amplitude sum_i a_i r_i
x = sp.Symbol("x", positive=True)
