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
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert len(outputs) >= 3, "the tournament tables should be shown"
