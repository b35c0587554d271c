"""Render a claim card to HTML by executing the claim-card notebook."""

from __future__ import annotations

from pathlib import Path

from analysis import config
from analysis.claims.registry import load_claim

# --- the `perfclaims claim` command ----------------------------------------------------------------

NOTEBOOK = "50-claim-card"


def render_card(claim: str | Path, *, out: Path, points_path: str | Path | None = None) -> Path:
    """Execute the claim-card notebook for ``claim`` and write ``out/<id>.html`` (code hidden, images inline)."""
    import nbformat
    import papermill as pm
    from nbconvert import HTMLExporter

    c = load_claim(claim)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    is_file = Path(str(claim).split("#")[0]).suffix.lower() in (".csv", ".yaml", ".yml")
    params = {"claim": c.id, "claim_file": str(Path(str(claim)).resolve()) if is_file else None,
              "results_path": str((out / f"{c.id}.results.json").resolve())}
    if points_path:
        params["points_path"] = str(Path(points_path).resolve())
    executed = out / f"{c.id}.ipynb"
    from analysis.report import quiet_kernel_stderr

    with quiet_kernel_stderr():  # the kernel's "running over TCP without encryption" warning is not the user's
        pm.execute_notebook(str(config.NOTEBOOKS_DIR / f"{NOTEBOOK}.ipynb"), str(executed), parameters=params,
                            kernel_name="python3", cwd=str(config.NOTEBOOKS_DIR), progress_bar=False)
    nb = nbformat.read(str(executed), as_version=4)
    exporter = HTMLExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True,
                            embed_images=True)
    body, _ = exporter.from_notebook_node(nb)
    html_path = out / f"{c.id}.html"
    html_path.write_text(body, encoding="utf-8")
    return html_path


