"""Executing one notebook and exporting it to HTML.

Two executors: ``papermill`` starts a kernel per notebook, and ``inprocess`` (the shipped suite's choice) runs the
notebook's code cells in one IPython shell inside the calling process, a worker of the runner's pool, capturing
display outputs into nbformat outputs (no kernel start, imports paid once before the workers are forked: a claim
card renders in well under a second).
Between in-process runs the namespace is reset, figures are closed, and matplotlib's rcParams, pandas' options
and the warning filters are restored. Either way the result is exported with the same offline template
(``analysis/templates/perfclaims``).
papermill, nbformat and nbconvert are imported only here, where they are used.
"""

from __future__ import annotations

import base64
import contextlib
import io
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

from analysis import config
from analysis.lazy_imports import defer_iri_grammar
from analysis.report.results import load_results, write_atomic

TEMPLATE_DIR = Path(__file__).resolve().parents[1] / "templates"

# nbformat validates with jsonschema, which would build the optional IRI format grammar at import (1-3 s); the
# lazy stand-in builds it only if a schema ever checks the `iri` format (none of the notebook schemas does).
defer_iri_grammar()


class NotebookError(RuntimeError):
    """A cell raised: ``ename``/``evalue`` as a kernel reports them."""

    def __init__(self, ename: str, evalue: str):
        super().__init__(f"{ename}: {evalue}")
        self.ename, self.evalue = ename, evalue


def short_error(err: BaseException) -> str:
    name = getattr(err, "ename", type(err).__name__)
    value = getattr(err, "evalue", str(err))
    return f"{name}: {value}".strip()[:500]


# --- papermill -------------------------------------------------------------------------------------

# transport warning; the interrupt ipykernel logs when it is shut down between cells (the report already finished)
_KERNEL_NOISE = ("Kernel is running over TCP without encryption", "KeyboardInterrupt caught in kernel")


@contextlib.contextmanager
def quiet_kernel_stderr():
    """Drop the kernel's transport warning from stderr (it inherits our fd 2); keep everything else."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            for line in tmp.read().decode(errors="replace").splitlines():
                if line.strip() and not any(noise in line for noise in _KERNEL_NOISE):
                    print(line, file=sys.stderr)


def run_papermill(src: Path, executed: Path, parameters: dict, cwd: Path):
    """Execute under papermill into ``executed``; returns (notebook node, error text or '')."""
    import nbformat
    import papermill as pm

    error = ""
    try:
        with quiet_kernel_stderr():
            pm.execute_notebook(str(src), str(executed), parameters=parameters, kernel_name="python3",
                                cwd=str(cwd), progress_bar=False)
    except Exception as err:  # any failure marks this report failed; the suite goes on
        error = short_error(err)
    nb = nbformat.read(str(executed), as_version=4) if executed.exists() else None
    return nb, error


# --- in process ------------------------------------------------------------------------------------

_STATE: dict = {}


def _shell():
    """One IPython shell per process whose display outputs land in ``_STATE['sink']`` as nbformat outputs."""
    if "shell" in _STATE:
        return _STATE["shell"]
    from IPython.core.displayhook import DisplayHook
    from IPython.core.displaypub import DisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell
    from nbformat.v4 import new_output
    from traitlets.config import Config

    def _data(data: dict) -> dict:
        return {k: (base64.b64encode(v).decode("ascii") if isinstance(v, bytes) else v) for k, v in data.items()}

    class Publisher(DisplayPublisher):
        def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kwargs):
            _STATE["sink"].append(new_output("display_data", data=_data(data), metadata=metadata or {}))

        def clear_output(self, wait=False):
            _STATE["sink"].clear()

    class Hook(DisplayHook):
        def write_output_prompt(self):
            pass

        def write_format_data(self, format_dict, md_dict=None):
            _STATE["sink"].append(new_output("execute_result", data=_data(format_dict), metadata=md_dict or {},
                                             execution_count=_STATE.get("count")))

        def finish_displayhook(self):
            self._is_active = False

        def flush(self):  # as IPython's, without its full garbage collection (0.4 s with the stack loaded)
            import gc

            collect, gc.collect = gc.collect, (lambda *a: 0)
            try:
                super().flush()
            finally:
                gc.collect = collect

    class Shell(InteractiveShell):
        def enable_gui(self, gui=None):  # no event loop: figures are captured by the inline backend
            pass

        def _showtraceback(self, etype, evalue, stb):
            _STATE["sink"].append(new_output("error", ename=getattr(etype, "__name__", str(etype)),
                                             evalue=str(evalue), traceback=list(stb)))
            _STATE["error"] = (getattr(etype, "__name__", str(etype)), str(evalue))

    cfg = Config()
    cfg.HistoryManager.enabled = False
    cfg.InteractiveShell.colors = "nocolor"
    shell = Shell.instance(config=cfg, display_pub_class=Publisher, displayhook_class=Hook)
    os.environ.setdefault("MPLBACKEND", "Agg")
    with contextlib.redirect_stdout(io.StringIO()):
        shell.enable_matplotlib("inline")
    _draw_figures_once(shell)
    import matplotlib

    _STATE.update(shell=shell, rc=dict(matplotlib.rcParams))
    return shell


def _draw_figures_once(shell) -> None:
    """Drop pyplot's redraw of every figure after each cell: the inline backend draws each figure when it saves it
    after the cell, and the extra draw (meant for windows on screen) was a third of each figure's cost."""
    import matplotlib.pyplot as plt

    hook = getattr(plt, "_draw_all_if_interactive", None)
    if hook is not None and hook in shell.events.callbacks.get("post_execute", []):
        shell.events.unregister("post_execute", hook)


def run_inprocess(src: Path, parameters: dict, cwd: Path):
    """Execute the code cells of ``src`` in this process's shell; returns (notebook node with outputs, error or '')."""
    import matplotlib
    import matplotlib.pyplot as plt
    import nbformat
    from nbformat.v4 import new_code_cell, new_output

    nb = nbformat.read(str(src), as_version=4)
    shell = _shell()
    shell.reset(new_session=False)
    _inject_parameters(nb, parameters, new_code_cell)
    error = ""
    old_cwd, old_filters = os.getcwd(), list(warnings.filters)
    os.chdir(cwd)
    try:
        for count, cell in enumerate((c for c in nb.cells if c.cell_type == "code"), 1):
            sink: list = []
            _STATE.update(sink=sink, count=count, error=None)
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                result = shell.run_cell(cell.source, store_history=True, silent=False)
            streams = [new_output("stream", name=n, text=s.getvalue()) for n, s in (("stdout", out), ("stderr", err))
                       if s.getvalue()]
            cell.outputs = streams + sink
            cell.execution_count = count
            # an error raised after the cell ran (drawing its figures, in a post-execute hook) leaves the cell a
            # success but its traceback in the output: a failure, as a kernel reports it
            if not result.success or _STATE.get("error"):
                ename, evalue = _STATE.get("error") or (type(result.error_in_exec or result.error_before_exec).__name__,
                                                        str(result.error_in_exec or result.error_before_exec))
                error = f"{ename}: {evalue}".strip()[:500]
                break
    finally:
        os.chdir(old_cwd)
        plt.close("all")
        matplotlib.rcParams.update(_STATE["rc"])
        if "pandas" in sys.modules:  # display options a notebook set
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sys.modules["pandas"].reset_option("all")
        warnings.filters[:] = old_filters
        shell.reset(new_session=False)
    return nb, error


def _inject_parameters(nb, parameters: dict, new_code_cell) -> None:
    """As papermill does: a cell tagged ``injected-parameters`` after the one tagged ``parameters``."""
    if not parameters:
        return
    source = "# Parameters\n" + "\n".join(f"{k} = {v!r}" for k, v in parameters.items())
    cell = new_code_cell(source, metadata={"tags": ["injected-parameters"]})
    index = next((i + 1 for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])), 0)
    nb.cells.insert(index, cell)


# --- HTML ------------------------------------------------------------------------------------------

_NO_ALT = "No description has been provided for this image"


def _exporter():
    if "exporter" not in _STATE:
        from nbconvert import HTMLExporter
        from nbconvert.exporters.templateexporter import TemplateExporter
        from nbconvert.filters.highlight import Highlight2HTML
        from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter

        class PageExporter(HTMLExporter):
            """nbconvert's HTML export without its last step, which parses the finished page with BeautifulSoup to
            give images without alt text a placeholder and outputs a tabindex (0.2 s a page, a tenth of a claim
            card's render): :func:`_accessible` does the same to the template's own markup."""

            def from_notebook_node(self, nb, resources=None, **kw):
                langinfo = nb.metadata.get("language_info", {})
                lexer = langinfo.get("pygments_lexer", langinfo.get("name", None))
                self.register_filter("highlight_code", self.filters.get(
                    "highlight_code", Highlight2HTML(pygments_lexer=lexer, parent=self)))
                resources = self._init_resources(resources)
                self.register_filter("filter_data_type", WidgetsDataTypeFilter(
                    notebook_metadata=self._nb_metadata, parent=self, resources=resources))
                html, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
                return _accessible(html), resources

        # embed_images stays off: figures are already inline data: outputs, the notebooks' Markdown references no
        # image file, and embedding would parse every finished page again with BeautifulSoup (0.1-0.5 s a page)
        # and pull into a shared page whatever local file a Markdown image pointed at.
        _STATE["exporter"] = PageExporter(
            template_name="perfclaims", extra_template_basedirs=[str(TEMPLATE_DIR)], exclude_input=True,
            exclude_input_prompt=True, exclude_output_prompt=True, embed_images=False)
    return _STATE["exporter"]


def _accessible(html: str) -> str:
    """What nbconvert's HTML exporter adds after its template: ``alt`` on every ``<img>`` without one, and
    ``tabindex="0"`` on each output area (keyboard focus), on the template's own tags (a cell's output is escaped
    text or inline data, never a raw tag these patterns would meet)."""
    import re

    html = re.sub(r"<img(?![^>]*\balt=)", f'<img alt="{_NO_ALT}"', html)
    return re.sub(r'(<div class="[^"]*\bjp-OutputArea-output\b[^"]*")(?![^>]*\btabindex=)', r'\1 tabindex="0"', html)


def export_html(nb, html_path: Path, page: dict | None = None) -> None:
    """Self-contained HTML (code hidden, nothing fetched at view time, scripts forbidden by its CSP), written
    atomically. ``page`` carries the title, the back link and the footer's run date, hashes and command."""
    import nbformat

    if isinstance(nb, (str, Path)):
        nb = nbformat.read(str(nb), as_version=4)
    page = dict(page or {})
    nb.metadata["title"] = str(page.get("title") or nb.metadata.get("title") or "perfclaims report")
    nb.metadata["perfclaims"] = {k: str(v) for k, v in page.items() if v not in (None, "")}
    body, _ = _exporter().from_notebook_node(nb)
    # heading ids as ASCII slugs: a heading with ">", "×" or "%" got a permalink that broke
    from analysis.report.anchors import heading_anchors

    write_atomic(Path(html_path), heading_anchors(body))


def to_html(notebook_path: Path, html_path: Path, page: dict | None = None) -> None:
    """An executed notebook file as a report page (see :func:`export_html`)."""
    export_html(Path(notebook_path), Path(html_path), page)


def page_title(title: str, results: dict | None) -> str:
    """A report's ``<title>``: the notebook's own ``title`` result, else the suite title, naming model and hardware."""
    results = results or {}
    base = str(results.get("title") or title)
    model, hardware = results.get("model"), results.get("hardware")
    extra = " on ".join(str(x) for x in (model, hardware) if isinstance(x, str) and x and x not in base)
    return f"{base}: {extra}" if extra else base


def execute(src: Path, parameters: dict, executor: str, work: Path, cwd: Path):
    """Run ``src`` with ``parameters`` (plus ``results_path`` in ``work``); returns (nb, error, results)."""
    work.mkdir(parents=True, exist_ok=True)
    results_path = work / "results.json"
    results_path.unlink(missing_ok=True)
    params = {**parameters, "results_path": str(results_path)}
    if not src.exists():
        return None, f"FileNotFoundError: notebook {src.name} not found in {src.parent}", {}
    if executor == "inprocess":
        nb, error = run_inprocess(src, params, cwd)
    else:
        nb, error = run_papermill(src, work / "executed.ipynb", params, cwd)
    results = load_results(results_path) if results_path.exists() and not error else {}
    return nb, error, results


def render_notebook(notebook: str | Path, parameters: dict | None, html_path: str | Path, *,
                    title: str | None = None, page: dict | None = None) -> dict:
    """Execute one notebook in this process and write its HTML page; return what it saved with ``save_results``.

    ``notebook`` is a suite name (``50-claim-card``) or a path. The page is written even when a cell fails (the
    error shows on it); then :class:`NotebookError` is raised. Warm, a claim card takes well under a second.
    """
    src = Path(notebook)
    if src.suffix != ".ipynb":
        src = Path(config.NOTEBOOKS_DIR) / f"{notebook}.ipynb"
    if not src.exists():
        raise FileNotFoundError(f"{src}: notebook not found")
    html_path = Path(html_path)
    html_path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".render-", dir=html_path.parent) as work:
        nb, error, results = execute(src, dict(parameters or {}), "inprocess", Path(work), src.parent)
    export_html(nb, html_path, {**(page or {}), "title": page_title(title or src.stem, results)})
    if error:
        ename, _, evalue = error.partition(": ")
        raise NotebookError(ename, evalue)
    return results


def preload(executors: set[str]) -> None:
    """Import what the workers will need once, before they are forked, so each starts warm."""
    import matplotlib.pyplot  # noqa: F401
    import nbformat  # noqa: F401
    import pandas  # noqa: F401

    if not _STATE.get("warm"):  # templates, Markdown renderer and their regexes compiled once, inherited by workers
        from nbformat.v4 import new_markdown_cell, new_notebook

        _exporter().from_notebook_node(new_notebook(cells=[new_markdown_cell("warm-up")]))
        _STATE["warm"] = True
    if "inprocess" in executors:
        from IPython.core.interactiveshell import InteractiveShell  # noqa: F401
    if "papermill" in executors:
        import papermill  # noqa: F401


def run_job_spec(spec: dict) -> dict:
    """Worker entry point (a process of the pool): execute one report and export its page into ``spec['work']``.

    Returns status, error, seconds, results and title; the caller moves the files into place.
    """
    start = time.monotonic()
    work = Path(spec["work"])
    nb, error, results = execute(Path(spec["src"]), spec["parameters"], spec["executor"], work, Path(spec["cwd"]))
    title = page_title(spec["title"], results)
    if nb is not None and spec["executor"] == "inprocess":  # the executed notebook, as papermill leaves one
        import nbformat

        nbformat.write(nb, str(work / "executed.ipynb"))
    if nb is not None:
        try:
            export_html(nb, work / "page.html", {**spec["page"], "title": title})
        except Exception as err:
            error = error or f"HTML conversion failed: {short_error(err)}"
    return {"status": "failed" if error else "ok", "error": error, "results": results, "title": title,
            "seconds": time.monotonic() - start}
