"""Every notebook in notebooks/ runs top to bottom in a Jupyter kernel, draws at least one
picture, and is stored clean: nbformat 4.5 with unique cell ids, no outputs.

The notebooks run through nbclient in an IPython kernel (ipykernel's `python3`, which
jupyter_client starts with this process's interpreter: the venv's), one after another in
the one kernel of this module: its start and the imports of jax, matplotlib and gomoku_jax
are paid once, not once per notebook. Each notebook starts from an empty namespace
(`%reset -f`: nothing an earlier one defined or imported is visible to it) in its own
temporary working directory; after a notebook that failed, the kernel is restarted. The
kernel gets this process's environment, so XLA's optimisation level from conftest.py
(`XLA_FLAGS`), plus the persistent compilation cache conftest.py turned on (as JAX's
`JAX_*` variables): a notebook compiles its programs once per cache, not once per run. A
cell that raises fails the test with the cell and its traceback.
"""

import json
import os
import re
import sys
from pathlib import Path

import jax
import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))

# Seconds a cell may run before the test fails: far above what any cell needs (a notebook
# is meant to run in seconds), so that only a hung cell hits it.
CELL_TIMEOUT = 600

# The JAX settings of this process (conftest.py's compilation cache) the kernel inherits.
JAX_SETTINGS = ("jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs",
                "jax_persistent_cache_min_entry_size_bytes")

# Appended to the executed copy (never to the stored notebook): what the kernel runs on.
PROBE = ("import json, os, sys\n"
         "import jax\n"
         f"print(json.dumps({{'executable': sys.executable, 'xla_flags': "
         f"os.environ.get('XLA_FLAGS', ''), **{{k: getattr(jax.config, k) for k in "
         f"{JAX_SETTINGS!r}}}}}))")

# Prepended to the executed copy: an empty namespace (`%reset -f` also drops the names an
# earlier notebook imported) and the notebook's own working directory.
FRESH = "%reset -f\nimport os\nos.chdir({cwd!r})\ndel os"

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def kernel_env() -> dict:
    """This process's environment plus its JAX settings as the `JAX_*` variables JAX reads
    at import."""
    env = dict(os.environ)
    for name in JAX_SETTINGS:
        value = getattr(jax.config, name)
        if value is not None:
            env[name.upper()] = str(value)
    return env


def pictures(nb) -> int:
    """Outputs that are pictures: SVG, PNG, or HTML holding an <svg> (a board)."""
    count = 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "image/svg+xml" in data or "image/png" in data \
                    or "<svg" in "".join(data.get("text/html", "")):
                count += 1
    return count


@pytest.fixture(scope="module")
def kernel():
    """The kernel manager of the module's one kernel, started with `kernel_env()`."""
    from nbclient import NotebookClient
    from nbclient.util import run_sync

    starter = NotebookClient(nbformat.v4.new_notebook(), kernel_name="python3")
    km = starter.create_kernel_manager()
    starter.start_new_kernel(env=kernel_env())
    yield km
    run_sync(km.shutdown_kernel)(now=True)


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ has no .ipynb file"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_stored_clean(path):
    nb = json.loads(path.read_text())
    assert (nb["nbformat"], nb["nbformat_minor"]) == (4, 5)
    ids = [cell["id"] for cell in nb["cells"]]
    assert len(set(ids)) == len(ids)
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, cell["id"]


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, tmp_path, kernel):
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError
    from nbclient.util import run_sync

    nb = nbformat.read(path, as_version=4)
    assert any(cell.cell_type == "code" for cell in nb.cells), "no code cell"
    nb.cells.insert(0, nbformat.v4.new_code_cell(FRESH.format(cwd=str(tmp_path))))
    nb.cells.append(nbformat.v4.new_code_cell(PROBE))
    client = NotebookClient(nb, km=kernel, timeout=CELL_TIMEOUT, kernel_name="python3")
    error, ok = None, False
    try:
        client.execute()
        ok = True
    except CellExecutionError as e:  # its message: the cell's source and traceback
        error = ANSI.sub("", str(e))
    finally:
        if client.kc is not None:
            client.kc.stop_channels()
        if not ok:  # a timed-out cell may still run: the next notebook gets a new kernel
            run_sync(kernel.restart_kernel)(now=True)
    if error is not None:  # (outside the except: no chained traceback of nbclient's)
        pytest.fail(f"{path.name}: a cell raised\n{error}", pytrace=False)
    nb.cells.pop(0)
    probe = json.loads(nb.cells.pop().outputs[0]["text"])
    assert Path(probe["executable"]).resolve() == Path(sys.executable).resolve(), probe
    assert probe["xla_flags"] == os.environ.get("XLA_FLAGS", ""), probe
    for name in JAX_SETTINGS:
        assert probe[name] == getattr(jax.config, name), (name, probe)
    assert pictures(nb) > 0, f"{path.name} draws no picture (SVG, PNG or HTML with <svg>)"
