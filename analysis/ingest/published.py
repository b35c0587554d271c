"""Published result tables: numbers transcribed from a primary source (a pull request, a repository file, a blog
post), one YAML file per source table, as ``data/raw/published/*.yaml``. The format is documented in
``docs/published-tables.md``; the shipped tables and their provenance in ``data/raw/published/README.md``.

A file starts with ``published-table: 1`` (its detection key: nothing else is read as a published table, and a
published table is never read as a tool's raw log). Its ``source`` block says where the table is (URL, title, author,
date, table); ``conditions`` hold for every row (model, hardware, GPUs, parallelism, precision, framework,
speculative decoding, workload, lengths, requests, date); ``columns`` say what each measured column is: the
statistic of a latency (p50, mean, p90, p99) and, for a throughput, what it counts (output or total tokens) per what
(the system, or per GPU over all GPUs or the decode GPUs). Each row under ``rows`` is one measured point with its row
reference as the source shows it; a row may override a condition.

What the reader does with the columns, and never otherwise:
- a latency goes to the points-table column of its statistic (``ttft_ms_p50``, ``tpot_ms_mean``...);
  a latency whose statistic the source does not state is not stored (the file's note says so);
- tok/s/user is ``1000 / TPOT`` at the statistic the source used (``tok_s_per_user_def`` says which); a tok/s/user
  the source prints itself is kept as its own figure (``tool-per-user``) and checked against its TPOT;
- a total (input + output) tok/s is stored as ``total_tok_s`` only; output tok/s stays NaN unless the source gives
  it, or the row asks for ``output_from_total: source-formula`` (then ``output = total × osl / (isl + osl)``, flagged
  ``output-from-total``, allowed only where the source documents that it computed its total that way).

A row that contradicts itself (output above total, percentiles out of order, a tok/s/user its own TPOT contradicts)
is quarantined with the file, the line and the field; a malformed header rejects the file, naming line and field.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import yaml

from analysis.ingest.base import Format, Quarantine, Sink
from analysis.ingest.manifest import ManifestError, _LimitedLoader
from analysis.schema import (
    ACCEPTANCE_SOURCES,
    FLAGS,
    SPEC_METHODS,
    UNKNOWN,
    FieldError,
    add_flag,
    as_number,
    normalize_precision,
    normalize_spec_method,
)

PRIORITY = 15  # before every reader that could look at a YAML-ish text file
FORMAT_NAME = "published-table"
KEY = "published-table"
VERSIONS = (1,)
_DETECT = re.compile(rb"(?m)^published-table:[ \t]*['\"]?1['\"]?[ \t]*(#.*)?$")

SOURCE_REQUIRED = ("url", "title", "author", "date", "table")
SOURCE_OPTIONAL = ("read", "excerpt", "note", "commit")
# conditions: points-table columns a table may state, plus the few words the reader turns into columns
CONDITION_COLUMNS = (
    "model", "model_revision", "hardware", "n_gpus", "n_prefill_gpus", "n_decode_gpus", "scale_up_domain", "scope",
    "tp", "ep", "dp", "pp", "n_workers", "disagg", "precision", "precision_recipe", "kv_dtype", "framework",
    "framework_version", "tool", "tool_version", "spec_method", "draft_tokens", "acceptance_length",
    "acceptance_source", "workload", "isl", "osl", "concurrency", "num_requests", "date", "scenario", "run_id",
    "flags",
)
CONDITION_WORDS = ("output_from_total", "note")
CONDITIONS = set(CONDITION_COLUMNS) | set(CONDITION_WORDS)
REQUIRED_CONDITIONS = ("model", "hardware", "n_gpus", "framework", "spec_method", "workload")

LATENCIES = {"ttft": "ttft_ms", "tpot": "tpot_ms", "itl": "itl_ms", "e2e": "e2e_ms"}
MEASURES = (*LATENCIES, "throughput", "tok_s_per_user", "request_s")
STATISTICS = ("mean", "p50", "p90", "p99", "unstated")
UNITS = {"ms": 1.0, "s": 1000.0}
COUNTS = ("output", "total", "unstated")
PER = ("system", "gpu")
DENOMINATORS = ("all", "decode", "prefill")
COLUMN_KEYS = {"header", "measures", "statistic", "unit", "counts", "per", "denominator", "logical", "note"}
STATISTIC_ORDER = ("p50", "p90", "p99")
TOLERANCE = 0.05  # a printed tok/s/user may differ this much from 1000/TPOT (rounding, per-request averaging)


# --- reading the YAML with line numbers --------------------------------------------------------------------------
def _detect(path: Path, head: bytes) -> bool:
    return bool(_DETECT.search(head[:4096]))


def _load(path: Path) -> yaml.MappingNode:
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise Quarantine(f"not UTF-8 text (byte {err.start})") from None
    loader = _LimitedLoader(text)
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        raise Quarantine(f"not valid YAML: {err.problem or err}", line=mark.line + 1 if mark else None) from None
    except (yaml.YAMLError, ManifestError) as err:
        raise Quarantine(f"not valid YAML: {err}") from None
    finally:
        loader.dispose()
    if not isinstance(node, yaml.MappingNode):
        raise Quarantine("expected a mapping with published-table, source, conditions, columns and rows", line=1)
    return node


def _line(node) -> int:
    return node.start_mark.line + 1


def _mapping(node, where: str) -> dict[str, tuple[object, yaml.Node]]:
    """{key: (python value, value node)} of a mapping node; duplicate keys are an error naming their line."""
    if not isinstance(node, yaml.MappingNode):
        raise Quarantine(f"{where} must be a mapping of key: value", line=_line(node), field=where)
    out: dict[str, tuple[object, yaml.Node]] = {}
    for key_node, value_node in node.value:
        key = str(_value(key_node))
        if key in out:
            raise Quarantine(f"{where}: key {key!r} given twice", line=_line(key_node), field=f"{where}.{key}")
        out[key] = (_value(value_node), value_node)
    return out


def _value(node):
    """A plain Python value from a node, using the safe constructors only."""
    if isinstance(node, yaml.ScalarNode):
        loader = yaml.SafeLoader("")
        try:
            return loader.construct_object(node, deep=True)
        finally:
            loader.dispose()
    if isinstance(node, yaml.SequenceNode):
        return [_value(child) for child in node.value]
    if isinstance(node, yaml.MappingNode):
        return {str(_value(k)): _value(v) for k, v in node.value}
    return None


# --- the header --------------------------------------------------------------------------------------------------
def _source(entries: dict) -> dict:
    if "source" not in entries:
        raise Quarantine("no 'source' block (url, title, author, date, table)", line=1, field="source")
    source = _mapping(entries["source"][1], "source")
    for key in SOURCE_REQUIRED:
        if key not in source or source[key][0] in (None, ""):
            raise Quarantine(f"source.{key} is required", line=_line(entries["source"][1]), field=f"source.{key}")
    unknown = sorted(set(source) - set(SOURCE_REQUIRED) - set(SOURCE_OPTIONAL))
    if unknown:
        raise Quarantine(f"unknown source key(s) {', '.join(unknown)}", line=_line(source[unknown[0]][1]),
                         field=f"source.{unknown[0]}")
    url = str(source["url"][0])
    if not url.startswith("https://"):
        raise Quarantine("source.url must be an https:// address of the primary source", line=_line(source["url"][1]),
                         field="source.url")
    return {k: str(v[0]) for k, v in source.items()}


def _check_condition(key: str, value, node, where: str) -> object:
    """One condition value, checked; raises Quarantine naming its line and field."""
    field = f"{where}.{key}"
    if key not in CONDITIONS:
        raise Quarantine(f"unknown condition {key!r} (allowed: {', '.join(sorted(CONDITIONS))})", line=_line(node),
                         field=field)
    if isinstance(value, (dict, list)):
        raise Quarantine(f"{key} must be a single value", line=_line(node), field=field)
    if key == "spec_method" and normalize_spec_method(value) == UNKNOWN and str(value).strip().lower() != UNKNOWN:
        raise Quarantine(f"spec_method must be one of {', '.join(SPEC_METHODS)}, got {value!r}", line=_line(node),
                         field=field)
    if key == "acceptance_source" and str(value) not in ACCEPTANCE_SOURCES:
        raise Quarantine(f"acceptance_source must be one of {', '.join(ACCEPTANCE_SOURCES)}, got {value!r}",
                         line=_line(node), field=field)
    if key == "precision" and normalize_precision(value) == UNKNOWN and str(value) != UNKNOWN:
        raise Quarantine(f"unknown precision {value!r}", line=_line(node), field=field)
    if key == "flags" and value is not None:
        unknown = [f for f in str(value).split(";") if f and f not in FLAGS]
        if unknown:
            raise Quarantine(f"flags must be flags perfclaims defines (see analysis/schema.py), got {unknown[0]!r}",
                             line=_line(node), field=field)
    if key == "output_from_total" and value not in (None, "source-formula"):
        raise Quarantine("output_from_total must be 'source-formula' (the source documents output = total × osl / "
                         "(isl + osl)) or absent", line=_line(node), field=field)
    if key == "date" and value is not None:
        value = str(value)
        if not re.match(r"^\d{4}-\d{2}-\d{2}$", value):
            raise Quarantine(f"date must be YYYY-MM-DD, got {value!r}", line=_line(node), field=field)
    return value


def _conditions(entries: dict) -> dict[str, tuple[object, int]]:
    if "conditions" not in entries:
        raise Quarantine("no 'conditions' block", line=1, field="conditions")
    node = entries["conditions"][1]
    out = {}
    for key, (value, value_node) in _mapping(node, "conditions").items():
        out[key] = (_check_condition(key, value, value_node, "conditions"), _line(value_node))
    return out


def _columns(entries: dict) -> dict[str, dict]:
    if "columns" not in entries:
        raise Quarantine("no 'columns' block: say what each measured column is", line=1, field="columns")
    out: dict[str, dict] = {}
    for name, (spec, node) in _mapping(entries["columns"][1], "columns").items():
        where = f"columns.{name}"
        if name in CONDITIONS or name == "row":
            raise Quarantine(f"column {name!r} has the name of a condition", line=_line(node), field=where)
        if not isinstance(spec, dict):
            raise Quarantine("a column is a mapping (header, measures, statistic...)", line=_line(node), field=where)
        unknown = sorted(set(spec) - COLUMN_KEYS)
        if unknown:
            raise Quarantine(f"unknown key(s) {', '.join(unknown)}", line=_line(node), field=f"{where}.{unknown[0]}")
        if not spec.get("header"):
            raise Quarantine("header (the source's column title, verbatim) is required", line=_line(node),
                             field=f"{where}.header")
        measures = spec.get("measures")
        if measures not in MEASURES:
            raise Quarantine(f"measures must be one of {', '.join(MEASURES)}, got {measures!r}", line=_line(node),
                             field=f"{where}.measures")
        if measures in LATENCIES or measures == "tok_s_per_user":
            if spec.get("statistic") not in STATISTICS:
                raise Quarantine(f"statistic must be one of {', '.join(STATISTICS)} (what the source says the "
                                 f"column is), got {spec.get('statistic')!r}", line=_line(node),
                                 field=f"{where}.statistic")
        if measures in LATENCIES and spec.get("unit", "ms") not in UNITS:
            raise Quarantine(f"unit must be one of {', '.join(UNITS)}", line=_line(node), field=f"{where}.unit")
        if measures == "throughput":
            if spec.get("counts") not in COUNTS:
                raise Quarantine(f"counts must be one of {', '.join(COUNTS)} (output or total tokens), got "
                                 f"{spec.get('counts')!r}", line=_line(node), field=f"{where}.counts")
            if spec.get("per") not in PER:
                raise Quarantine(f"per must be one of {', '.join(PER)}", line=_line(node), field=f"{where}.per")
            if spec["per"] == "gpu" and spec.get("denominator") not in DENOMINATORS:
                raise Quarantine(f"a per-GPU throughput needs denominator: {' | '.join(DENOMINATORS)} (which GPUs "
                                 "it divides by)", line=_line(node), field=f"{where}.denominator")
        out[name] = spec
    stats = {}
    for name, spec in out.items():
        key = (spec["measures"], spec.get("statistic"), spec.get("counts"), spec.get("per"))
        if spec["measures"] != "throughput" and spec.get("statistic") == "unstated":
            continue
        if key in stats:
            raise Quarantine(f"columns {stats[key]!r} and {name!r} measure the same thing", field=f"columns.{name}")
        stats[key] = name
    return out


# --- one row -----------------------------------------------------------------------------------------------------
def _number(value, field: str, line: int) -> float:
    try:
        return as_number(value, field)
    except FieldError as err:
        raise Quarantine(err.reason, line=line, field=field) from None


def _point(row: dict[str, tuple[object, yaml.Node]], header: dict, *, stem: str, unstored: set) -> dict:
    """The points-table row for one table row; raises Quarantine (line, field) for what cannot be right."""
    source, conditions, columns = header["source"], header["conditions"], header["columns"]
    row_line = header["row_line"]
    if "row" not in row or row["row"][0] in (None, ""):
        raise Quarantine("each row needs 'row': its reference as the source shows it (e.g. 'concurrency 16')",
                         line=row_line, field="row")
    ref = str(row["row"][0])
    cond = {k: v for k, (v, _) in conditions.items()}
    lines = {k: line for k, (_, line) in conditions.items()}
    values: dict[str, tuple[object, int]] = {}
    for key, (value, node) in row.items():
        if key == "row":
            continue
        if key in columns:
            values[key] = (value, _line(node))
        else:
            cond[key] = _check_condition(key, value, node, f"rows[{ref}]")
            lines[key] = _line(node)
    missing = [k for k in REQUIRED_CONDITIONS if cond.get(k) in (None, "")]
    if missing:
        raise Quarantine(f"condition {missing[0]!r} is not given (in conditions or the row)", line=row_line,
                         field=missing[0])
    if normalize_spec_method(cond["spec_method"]) not in ("none", UNKNOWN) and not cond.get("acceptance_source"):
        cond["acceptance_source"] = UNKNOWN

    point = {k: v for k, v in cond.items() if k in CONDITION_COLUMNS and v is not None}
    point["spec_method"] = normalize_spec_method(cond["spec_method"])
    point.update(source_kind="published-table", phase="serving",
                 source_url=f"{source['url']} [table: {source['table']}; row: {ref}]",
                 run_id=str(cond.get("run_id") or f"{stem}#{ref}"), date=str(cond.get("date") or source["date"]))
    flags = str(cond.get("flags") or "")
    n_gpus = _number(cond["n_gpus"], "n_gpus", lines.get("n_gpus", row_line))
    denominators = {"all": n_gpus,
                    "decode": _number(cond.get("n_decode_gpus"), "n_decode_gpus", lines.get("n_decode_gpus", 0)),
                    "prefill": _number(cond.get("n_prefill_gpus"), "n_prefill_gpus", lines.get("n_prefill_gpus", 0))}
    given: dict[str, tuple[float, int, str]] = {}  # points column -> (value, line, row key)
    for key, (raw, line) in values.items():
        spec = columns[key]
        x = _number(raw, key, line)
        if math.isnan(x):
            continue
        measures = spec["measures"]
        if measures in LATENCIES:
            if spec["statistic"] == "unstated":
                unstored.add(f"{key} ({spec['header']}): the source does not say which statistic it is")
                continue
            column = f"{LATENCIES[measures]}_{spec['statistic']}"
            given[column] = (x * UNITS[spec.get("unit", "ms")], line, key)
        elif measures == "tok_s_per_user":
            given["tok_s_per_user"] = (x, line, key)
        elif measures == "request_s":
            given["request_s"] = (x, line, key)
        else:
            if spec["counts"] == "unstated":
                unstored.add(f"{key} ({spec['header']}): the source does not say whether it counts output or "
                             "total tokens")
                continue
            if spec.get("logical"):
                flags = add_flag(flags, "logical-tokens")
            system = x
            if spec["per"] == "gpu":
                gpus = denominators[spec["denominator"]]
                if math.isnan(gpus):
                    raise Quarantine(f"{key} is per {spec['denominator']} GPU but that GPU count is not given",
                                     line=line, field=key)
                system = x * gpus
                if spec["counts"] == "output":
                    given["tok_s_per_gpu"] = (x, line, key)
                    point["gpu_denominator"] = spec["denominator"]
            given[f"{spec['counts']}_tok_s"] = (system, line, key)
    _check_consistency(given, columns)
    point.update({column: value for column, (value, _, _) in given.items()})

    if "tok_s_per_user" in given:
        point["tok_s_per_user_def"] = "tool-per-user"
    elif "tpot_ms_p50" in given:
        point["tok_s_per_user"] = 1000.0 / given["tpot_ms_p50"][0]
        point["tok_s_per_user_def"] = "1000/tpot_ms_p50"
    elif "tpot_ms_mean" in given:
        point["tok_s_per_user"] = 1000.0 / given["tpot_ms_mean"][0]
        point["tok_s_per_user_def"] = "1000/tpot_ms_mean"
    if cond.get("output_from_total") == "source-formula":
        if "output_tok_s" in given:
            raise Quarantine("output_from_total asked for, but the row gives output tok/s itself",
                             line=lines["output_from_total"], field="output_from_total")
        isl, osl = (_number(cond.get(k), k, lines.get(k, row_line)) for k in ("isl", "osl"))
        if "total_tok_s" not in given or math.isnan(isl) or math.isnan(osl):
            raise Quarantine("output_from_total needs a total tok/s, isl and osl", line=lines["output_from_total"],
                             field="output_from_total")
        point["output_tok_s"] = given["total_tok_s"][0] * osl / (isl + osl)
        if not math.isnan(n_gpus):
            point["tok_s_per_gpu"] = point["output_tok_s"] / n_gpus
            point["gpu_denominator"] = "all"
        flags = add_flag(flags, "output-from-total")
    point.pop("flags", None)
    if flags:
        point["flags"] = flags
    return point


def _check_consistency(given: dict[str, tuple[float, int, str]], columns: dict) -> None:
    """Quarantine a row whose numbers cannot all be right, naming the field and its line."""
    if "output_tok_s" in given and "total_tok_s" in given and given["output_tok_s"][0] > given["total_tok_s"][0] * (
            1 + 1e-9):
        _, line, key = given["output_tok_s"]
        raise Quarantine(f"output tok/s ({given['output_tok_s'][0]:g}) exceeds total tok/s "
                         f"({given['total_tok_s'][0]:g}): total counts input and output", line=line, field=key)
    for prefix in LATENCIES.values():
        chain = [(s, given[f"{prefix}_{s}"]) for s in STATISTIC_ORDER if f"{prefix}_{s}" in given]
        for (lo_stat, (lo, _, lo_key)), (hi_stat, (hi, line, key)) in zip(chain, chain[1:]):
            if lo > hi * (1 + 1e-9):
                raise Quarantine(f"percentiles out of order: {lo_key} ({lo_stat}) {lo:g} > {key} ({hi_stat}) {hi:g}",
                                 line=line, field=key)
    if "tok_s_per_user" in given:
        user, line, key = given["tok_s_per_user"]
        stat = columns[key].get("statistic")
        tpot = given.get(f"tpot_ms_{stat}") or given.get("tpot_ms_p50") or given.get("tpot_ms_mean")
        if tpot and user > 0:
            implied = 1000.0 / tpot[0]
            if abs(user / implied - 1) > TOLERANCE:
                raise Quarantine(f"tok/s/user {user:g} contradicts the row's own TPOT {tpot[0]:g} ms "
                                 f"(1000/TPOT = {implied:.4g}; more than {TOLERANCE:.0%} apart)", line=line, field=key)


# --- the file ----------------------------------------------------------------------------------------------------
def _parse(path: Path, sink: Sink) -> None:
    root = _load(path)
    entries = _mapping(root, "document")
    version = entries.get(KEY, (None, root))[0]
    if version not in VERSIONS:
        raise Quarantine(f"{KEY}: unsupported version {version!r} (this reader knows {VERSIONS})",
                         line=_line(entries[KEY][1]) if KEY in entries else 1, field=KEY)
    unknown = sorted(set(entries) - {KEY, "source", "conditions", "columns", "rows"})
    if unknown:
        raise Quarantine(f"unknown top-level key(s) {', '.join(unknown)}", line=_line(entries[unknown[0]][1]),
                         field=unknown[0])
    header = {"source": _source(entries), "conditions": _conditions(entries), "columns": _columns(entries)}
    if "rows" not in entries or not isinstance(entries["rows"][1], yaml.SequenceNode):
        raise Quarantine("'rows' must be a list, one entry per measured point", line=1, field="rows")
    unstored: set[str] = set()
    for row_node in entries["rows"][1].value:
        header["row_line"] = _line(row_node)
        try:
            row = _mapping(row_node, "row")
            unknown = [k for k in row if k not in header["columns"] and k not in CONDITIONS and k != "row"]
            if unknown:
                k = unknown[0]
                raise Quarantine(f"{k!r} is neither a column declared under 'columns' nor a condition",
                                 line=_line(row[k][1]), field=k)
            point = _point(row, header, stem=path.stem, unstored=unstored)
        except Quarantine as err:
            sink.bad(err.reason, line=err.line or header["row_line"], field=err.field)
            continue
        sink.point(point, line=header["row_line"])
    for text in sorted(unstored):
        sink.note(f"not stored: {text}")


FORMATS = [
    Format(FORMAT_NAME, "published", _detect, _parse,
           "YAML whose first key is `published-table: 1` (a table transcribed from a primary source: source, "
           "conditions, columns with their statistic and denominator, rows); see docs/published-tables.md",
           "data/raw/published/sglang-pr33082-v4-flash-0731-gb300.yaml", row_tool=True),
]
