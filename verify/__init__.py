"""The audit: a claims registry, one check per claim, and the report plugin.

``pytest verify`` runs every check; the plugin in :mod:`verify.plugin` turns the
outcomes into a verdict per registered claim and writes ``report.md`` and
``report.json``.
"""
