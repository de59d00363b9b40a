"""The evaluation notebook runs end to end on a tiny budget, so it cannot rot."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

nbclient = pytest.importorskip("nbclient")

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "evaluation.ipynb"


def test_evaluation_notebook_executes_without_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEJAVU_NOTEBOOK_BUDGET", "tiny")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    resources = {"metadata": {"path": str(NOTEBOOK.parent)}}
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3", resources=resources)
    client.execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    tables = [o for o in outputs if "text/html" in o.get("data", {})]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(tables) >= 4, "the committed and live tournament tables should be shown"
    assert len(images) >= 5, "the heatmaps, the learning curves and both example games should be drawn"


def test_committed_notebook_holds_its_outputs() -> None:
    """The notebook is committed executed, so a reader sees the figures without running it."""
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(cell.execution_count for cell in code), "commit the notebook executed, every code cell run"
    assert not [o for cell in code for o in cell.outputs if o.output_type == "error"]
    assert sum("image/png" in o.get("data", {}) for cell in code for o in cell.outputs) >= 5
