"""Symbolic re-derivations (SymPy) of the audited papers' closed forms, one package per paper."""
