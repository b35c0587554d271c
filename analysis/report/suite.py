"""The suite file (``notebooks/suite.yml``): which notebooks run, with which parameters, reading which inputs.

Top-level keys (all optional except ``reports``): ``title``; ``notebooks`` (their folder, relative to the suite
file; default ``notebooks/``); ``parameters`` given to every notebook whose parameters cell names them (e.g. the
``points_path`` of a second suite over another data folder); ``inputs``, the files and folders every report reads
(their content hash decides whether a report is re-executed; default: the points table). Each entry of
``reports`` has ``notebook``, and optionally ``title``, ``slug``, ``parameters``, ``inputs``, ``executor``
(``papermill``: one kernel per report; or ``inprocess``: run in a worker process of the pool, whose imports are
already loaded; a top-level ``executor`` sets the default, else ``papermill``) and
``foreach: claims`` (one report per registry claim), and ``page`` (the module of ``analysis/pages`` it shows; default:
the notebook's name without its number, ``20-frontier`` -> ``frontier``, when that module exists). The page's
``rows_read`` says which rows of the points table the report reads (:mod:`analysis.report.views`); its cache key hashes
those rows, not the file (a notebook without a page module: the whole file).
``{out}`` in an input or a parameter stands for the output folder of the run (``reports/`` by default): the history
report reads the suite-history store ``{out}/history``, and such a report runs after this run's numbers are recorded.
In a ``foreach: claims`` entry, ``{claim}`` in an input path stands for each claim's id, so editing one claim
reruns only its card. Relative paths in ``inputs`` and in parameters named ``*_path``, ``*_dir`` or ``*_file``
are relative to the suite file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from analysis import config
from analysis.report import views

EXECUTORS = ("papermill", "inprocess")
_SLUG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,120}$")


@dataclass
class Job:
    """One notebook run: which notebook, its parameters, and where its outputs go."""

    notebook: str
    title: str
    parameters: dict = field(default_factory=dict)
    slug: str = ""
    executor: str = "papermill"
    inputs: list = field(default_factory=list)
    notebook_dir: Path | None = None
    view: str = ""                   # its page (analysis/pages/<view>.py), whose rows_read gives the rows it reads;
    #                                  "" (no page module): the whole points table
    defaults: dict = field(default_factory=dict)  # the notebook's own parameter defaults (literals only)
    status: str = "pending"          # ok | failed | unchanged (cache hit) | kept (not selected by --only)
    error: str = ""
    seconds: float = 0.0
    results: dict = field(default_factory=dict)
    key: str = ""                    # content hash of everything the report depends on
    inputs_hash: str = ""            # content hash of its data inputs alone
    made_on: str = ""                # run date of the run that executed it (earlier than this run when unchanged)

    @property
    def name(self) -> str:
        return self.slug or self.notebook

    @property
    def html_name(self) -> str:
        return f"{self.name}.html"

    @property
    def results_name(self) -> str:
        return f"{self.name}.results.json"

    @property
    def notebook_path(self) -> Path:
        return Path(self.notebook_dir or config.NOTEBOOKS_DIR) / f"{self.notebook}.ipynb"

    @property
    def ok(self) -> bool:
        return self.status in ("ok", "unchanged", "kept")

    def record(self) -> dict:
        """What the run manifest keeps about this job (JSON)."""
        return {"notebook": self.notebook, "slug": self.name, "title": self.title, "parameters": self.parameters,
                "executor": self.executor, "inputs": [str(p) for p in self.inputs], "view": self.view,
                "status": self.status,
                "error": self.error, "seconds": round(self.seconds, 2), "key": self.key,
                "inputs_hash": self.inputs_hash, "made_on": self.made_on}

    @classmethod
    def from_record(cls, rec: dict) -> Job:
        job = cls(rec["notebook"], rec.get("title", rec["notebook"]), dict(rec.get("parameters") or {}),
                  slug=rec.get("slug", ""), executor=rec.get("executor", "papermill"),
                  inputs=[Path(p) for p in rec.get("inputs") or []], view=rec.get("view", ""))
        for k in ("status", "error", "seconds", "key", "inputs_hash", "made_on"):
            if k in rec:
                setattr(job, k, rec[k])
        return job


@dataclass
class Suite:
    path: Path
    title: str
    jobs: list[Job]


def read_suite(path: Path, *, out: Path | None = None) -> Suite:
    """The suite file as jobs; an entry with ``foreach: claims`` expands to one job per registry claim; ``{out}``
    stands for ``out`` (default ``reports/``)."""
    path = Path(path)
    out_text = str(Path(out or config.REPORTS_DIR).resolve())
    if not path.is_file():
        raise FileNotFoundError(f"{path}: suite file not found")
    try:
        doc = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as err:
        raise ValueError(f"{path}: not valid YAML ({str(err).splitlines()[0]})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("reports") or [], list):
        raise ValueError(f"{path}: expected a mapping with a 'reports' list")
    here = path.resolve().parent
    nb_dir = (here / doc["notebooks"]).resolve() if doc.get("notebooks") else Path(config.NOTEBOOKS_DIR)
    shared_params = _resolve_paths(dict(doc.get("parameters") or {}), here)
    shared_inputs = [_resolve(p, here) for p in doc.get("inputs") or []]
    jobs: list[Job] = []
    seen: set[str] = set()
    for i, entry in enumerate(doc.get("reports") or []):
        if not isinstance(entry, dict) or "notebook" not in entry:
            raise ValueError(f"{path}: reports[{i}] needs a 'notebook'")
        executor = entry.get("executor", doc.get("executor", "papermill"))
        if executor not in EXECUTORS:
            raise ValueError(f"{path}: reports[{i}]: executor must be one of {', '.join(EXECUTORS)}")
        notebook = str(entry["notebook"])
        defaults = notebook_defaults(nb_dir / f"{notebook}.ipynb")
        known = notebook_parameters(nb_dir / f"{notebook}.ipynb")
        params = {k: v for k, v in shared_params.items() if k in known}
        params.update(_resolve_paths({k: _fill(v, {"out": out_text}) if isinstance(v, str) else v
                                      for k, v in dict(entry.get("parameters") or {}).items()}, here))
        raw_inputs = [_fill(p, {"out": out_text}) for p in entry["inputs"]] if "inputs" in entry else None
        if "points" in entry:
            raise ValueError(f"{path}: reports[{i}]: 'points' is gone: the rows a report reads come from its page's "
                             "rows_read (name the page with 'page:' when it is not the notebook's name)")
        # the page it shows: named, else the notebook's own (a notebook with no page module reads the whole table)
        view = (views.check_page(str(entry["page"]), f"{path}: reports[{i}]: ") if entry.get("page")
                else views.page_of(notebook) if views.has_page(views.page_of(notebook)) else "")
        title = str(entry.get("title", notebook))
        if entry.get("foreach") == "claims":
            expanded = [(f"{notebook}-{c}", title.replace("{claim}", c), {**params, "claim": c}, {"claim": c})
                        for c in _claim_ids()]
        else:
            expanded = [(str(entry.get("slug", notebook)), title, params, {})]
        for slug, job_title, job_params, fill in expanded:
            inputs = ([_resolve(_fill(p, fill), here) for p in raw_inputs] if raw_inputs is not None
                      else list(shared_inputs))
            # a path parameter is an input, unless inputs inside it already say what is read there
            inputs += [Path(v) for k, v in job_params.items() if _is_path_param(k, v) and Path(v) not in inputs
                       and not any(Path(x).is_relative_to(Path(v)) for x in inputs)]
            inputs = inputs or [Path(config.POINTS_FILE)]  # what a notebook reads when told nothing else
            if not _SLUG.match(slug):
                raise ValueError(f"{path}: reports[{i}]: {slug!r} cannot be a file name (letters, digits, . _ -)")
            if slug in seen:
                raise ValueError(f"{path}: two reports are named {slug!r}; give one a 'slug'")
            seen.add(slug)
            jobs.append(Job(notebook, job_title, job_params, slug=slug, executor=executor, inputs=inputs,
                            notebook_dir=nb_dir, view=view, defaults=defaults))
    return Suite(path, str(doc.get("title") or "perfclaims reports"), jobs)


def load_suite(path: Path) -> list[Job]:
    """The jobs of the suite file (see :func:`read_suite`)."""
    return read_suite(path).jobs


def notebook_parameters(path: Path) -> set[str]:
    """Names assigned in the notebook's cell tagged ``parameters`` (empty when the notebook cannot be read)."""
    try:
        nb = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return set()
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            src = "".join(cell.get("source", []))
            return set(re.findall(r"^([A-Za-z_]\w*)\s*(?::[^=]*)?=", src, re.M))
    return set()


def notebook_defaults(path: Path) -> dict:
    """The literal values assigned in the notebook's ``parameters`` cell (what a view reads when the suite gives
    no value); an assignment that is not a literal is left out."""
    import ast

    try:
        nb = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code" and "parameters" in cell.get("metadata", {}).get("tags", []):
            try:
                tree = ast.parse("".join(cell.get("source", [])))
            except SyntaxError:
                return {}
            found = {}
            for node in tree.body:
                target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else (
                    node.target if isinstance(node, ast.AnnAssign) and node.value is not None else None)
                if isinstance(target, ast.Name):
                    try:
                        found[target.id] = ast.literal_eval(node.value)
                    except ValueError:
                        pass
            return found
    return {}


def _fill(p, fill: dict) -> str:
    """``{claim}`` in an input path of a ``foreach: claims`` entry becomes each claim's id."""
    text = str(p)
    for k, v in fill.items():
        text = text.replace("{" + k + "}", v)
    return text


def _is_path_param(key: str, value) -> bool:
    return isinstance(value, str) and bool(value) and key.endswith(("_path", "_dir", "_file"))


def _resolve(p, here: Path) -> Path:
    p = Path(str(p)).expanduser()
    return p if p.is_absolute() else (here / p).resolve()


def _resolve_paths(params: dict, here: Path) -> dict:
    return {k: (str(_resolve(v, here)) if _is_path_param(k, v) else v) for k, v in params.items()}


def _claim_ids() -> list[str]:
    try:
        from analysis import claims
    except ImportError:
        return []
    return list(claims.claim_ids())
