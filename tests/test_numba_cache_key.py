"""The numba cache is keyed to the kernels' source (:mod:`numerics`).

Edits that can change machine code change the key; others keep it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import numerics


@pytest.fixture
def tree(tmp_path) -> Path:
    root = tmp_path / "numerics"
    shutil.copytree(Path(numerics.__file__).parent, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _edit(path: Path) -> None:
    path.write_text(path.read_text() + "\n# edited\n")


def test_key_is_stable(tree):
    assert numerics.numba_code_key(tree) == numerics.numba_code_key(tree) == numerics.numba_code_key()


@pytest.mark.parametrize(
    "module", ["rare_gates/sim_kernels.py", "rare_gates/model.py", "rare_gates/sim_rng.py", "multipath/wcr.py"]
)
def test_editing_a_kernel_or_a_module_it_imports_changes_the_key(tree, module):
    before = numerics.numba_code_key(tree)
    _edit(tree / module)
    assert numerics.numba_code_key(tree) != before


def test_editing_a_module_no_kernel_imports_keeps_the_key(tree):
    before = numerics.numba_code_key(tree)
    _edit(tree / "table_wcr.py")
    assert numerics.numba_code_key(tree) == before


def _cache_dir(env: dict) -> str:
    code = "import numerics, os; print(os.environ['NUMBA_CACHE_DIR'])"
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return run.stdout.strip()


def test_cache_dir_is_keyed_under_the_users_base_once(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "base")}
    keyed = _cache_dir(env)
    assert keyed == str(tmp_path / "base" / f"code-{numerics.numba_code_key()}")
    assert _cache_dir({**env, "NUMBA_CACHE_DIR": keyed}) == keyed  # a worker inherits it unchanged
