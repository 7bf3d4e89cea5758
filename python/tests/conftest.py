"""Shared fixtures: the package on sys.path, the tools when they are built."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

from reshard import tools  # noqa: E402
from reshard.errors import ReshardError  # noqa: E402


@pytest.fixture(scope="session")
def have_tools():
    """Skips a test when reshard-opt & co. are not built."""
    try:
        for t in ("reshard-opt", "reshard-translate", "reshard-run"):
            tools.tool(t)
    except ReshardError as e:
        pytest.skip(str(e))
    return True


@pytest.fixture
def round_trip(have_tools, tmp_path):
    """Writes a Layout as JSON and as .mlir, checks that the importer reads
    the JSON as the same IR, and returns the JSON's path."""
    def check(lay):
        js, py, imp = (str(tmp_path / n) for n in
                       ("l.json", "py.mlir", "imported.mlir"))
        lay.write_json(js)
        lay.write_mlir(py)
        tools.import_json(js, imp)
        assert tools.run("reshard-opt", [py]) == \
            tools.run("reshard-opt", [imp])
        return js
    return check


@pytest.fixture
def cli_env():
    """Environment for `python -m reshard` subprocesses."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(ROOT, "python")] +
        [p for p in [env.get("PYTHONPATH")] if p])
    env["MPLBACKEND"] = "Agg"
    return env
