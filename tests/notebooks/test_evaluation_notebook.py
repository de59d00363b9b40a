"""The evaluation notebook runs end to end on a tiny budget, so it cannot rot."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

nbclient = pytest.importorskip("nbclient")

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "evaluation.ipynb"


def test_evaluation_notebook_executes_without_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEJAVU_NOTEBOOK_BUDGET", "tiny")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    pictures = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(pictures) >= 4, "heatmap, learning curves and two example games should be drawn"
