"""A run's recorded launch settings → its speculative-decoding columns, with each engine's off-by-one.

A benchmark log says how many tokens each verify step committed (when it says anything); only the server's launch
settings say whether that number was *forced*. The settings come as an srt-slurm recipe (YAML: ``backend.type``,
``*_environment`` blocks, ``sglang_config`` / ``vllm_config`` / ``trtllm_config`` per worker role), a launch script
or command line (``export SGLANG_SIMULATE_ACC_LEN=3.39``, ``--speculative-config '{...}'``), a vLLM server log
(``non-default args: {... 'speculative_config': {...}}``) or a JSON record holding a ``speculative_config``. A
manifest entry names the file with ``launch_settings:`` (see :mod:`analysis.ingest.manifest`); nothing here guesses
from files that merely sit beside a log (InferenceX keeps a ``synthetic_acceptance_rates.json`` next to the very run
whose measured acceptance it was derived *from*).

Forcing knobs and what they count (acceptance length, AL, always includes the bonus token the target commits):

* SGLang ``SGLANG_SIMULATE_ACC_LEN`` (environment): the AL itself.
* vLLM ``speculative_config.rejection_sample_method: synthetic`` with ``synthetic_acceptance_length``: the AL itself;
  with ``synthetic_acceptance_rates`` (per-position shares of drafts accepted, as vLLM prints "Per-position
  acceptance"): AL = 1 + Σ rates.
* TensorRT-LLM ``TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS`` (environment): accepted *draft* tokens only, so
  AL = value + 1 (the InferenceX golden-AL README: "set it to the golden AL minus 1").
* ATOM ``--spec-decode-acceptance-length``: the AL itself.
* InferenceX ``SYNTHETIC_ACCEPTANCE=true`` (a master-config ``additional-settings`` entry, or the runner's
  environment) with ``SYNTHETIC_ACCEPTANCE_LENGTH``: that AL; without the length the runner injects the golden
  curve's value, which the file does not hold (forced, acceptance length unknown). Without the switch the length is
  not used (the injector does nothing). A knob set from a shell variable (``=${AL}``) is likewise forced, value
  unknown.

Drafted tokens per step: vLLM ``num_speculative_tokens``; TensorRT-LLM ``max_draft_len`` (or
``num_nextn_predict_layers``); SGLang ``speculative-num-draft-tokens`` counts the verified root too, so drafted =
that − 1, else ``speculative-num-steps``. Settings of prefill workers are left out (prefill does not decode) unless
nothing else is given; two different non-prefill values for one knob are an error naming both places.
"""

from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from analysis.schema import UNKNOWN, normalize_spec_method

FORCE_AL = ("SGLANG_SIMULATE_ACC_LEN",)  # the value is the acceptance length
FORCE_DRAFT_ONLY = ("TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS",)  # accepted draft tokens: AL = value + 1
# InferenceX's runner switch (configs/*-master.yaml ``additional-settings``): SYNTHETIC_ACCEPTANCE=true injects
# SYNTHETIC_ACCEPTANCE_LENGTH (an AL) into the recipe, or, without it, the golden curve's value for the run
INFERENCEX_SWITCH, INFERENCEX_LENGTH = "SYNTHETIC_ACCEPTANCE", "SYNTHETIC_ACCEPTANCE_LENGTH"
ENV_KNOBS = FORCE_AL + FORCE_DRAFT_ONLY + (INFERENCEX_SWITCH, INFERENCEX_LENGTH)
_ASSIGNMENT = re.compile(r"^\s*(?P<key>[A-Z][A-Z0-9_]*)=(?P<value>.*?)\s*$")
_SPEC_CONFIG_KEYS = ("speculative-config", "speculative_config")
_SGLANG_ALGORITHM = ("speculative-algorithm", "speculative_algorithm")
_SGLANG_STEPS = ("speculative-num-steps", "speculative_num_steps")
_SGLANG_DRAFT = ("speculative-num-draft-tokens", "speculative_num_draft_tokens")
_SGLANG_DRAFT_MODEL = ("speculative-draft-model-path", "speculative_draft_model_path")
_ATOM_AL = ("spec-decode-acceptance-length", "spec_decode_acceptance_length")


MAX_BYTES = 64 * 2**20  # a recipe is kilobytes and a server log megabytes; anything larger is not launch settings


class LaunchError(ValueError):
    """Launch settings that cannot be read or contradict themselves; ``field`` names the setting."""

    def __init__(self, reason: str, field: str | None = None):
        super().__init__(reason)
        self.reason = reason
        self.field = field


@dataclass(frozen=True)
class LaunchSpec:
    """What a run's launch settings say about speculative decoding. ``forced_by`` names the setting that pinned the
    acceptance (``None``: acceptance was left to the real draft); ``None`` fields were not set."""

    spec_method: str | None = None
    draft_tokens: float | None = None
    acceptance_length: float | None = None
    forced_by: str | None = None

    def columns(self) -> dict:
        """Points-table values (only those the settings gave)."""
        out: dict[str, Any] = {}
        if self.spec_method and self.spec_method != UNKNOWN:
            out["spec_method"] = self.spec_method
        if self.draft_tokens is not None:
            out["draft_tokens"] = self.draft_tokens
        if self.forced_by is not None:
            if self.acceptance_length is not None:
                out["acceptance_length"] = self.acceptance_length
            out["acceptance_source"] = "forced"
        return out


# --- one setting at a time ----------------------------------------------------------------------------
def _number(value: Any, field: str) -> float:
    try:
        x = float(str(value).strip().strip("'\""))
    except (TypeError, ValueError):
        raise LaunchError(f"{field} must be a number, got {value!r}", field) from None
    if not math.isfinite(x):
        raise LaunchError(f"{field} must be finite, got {value!r}", field)
    return x


def _spec_config(value: Any, field: str) -> dict:
    """A vLLM speculative config given as a mapping, a JSON string or a Python dict literal (server log)."""
    if isinstance(value, dict):
        return value
    text = str(value).strip().strip("'")
    for parse in (json.loads, ast.literal_eval):
        try:
            out = parse(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(out, dict):
            return out
    raise LaunchError(f"{field} is not a JSON object: {text[:80]!r}", field)


def from_vllm_config(config: dict, field: str = "speculative_config") -> LaunchSpec:
    """A ``speculative_config`` mapping: vLLM's (``method``, ``num_speculative_tokens``, synthetic acceptance) or
    TensorRT-LLM's (``decoding_type``, ``max_draft_len`` / ``num_nextn_predict_layers``)."""
    word = config.get("method", config.get("decoding_type"))
    method = normalize_spec_method(word) if word is not None else None
    draft_key = next((k for k in ("num_speculative_tokens", "max_draft_len", "num_nextn_predict_layers")
                      if config.get(k) is not None), None)
    draft_tokens = _number(config[draft_key], f"{field}.{draft_key}") if draft_key else None
    if str(config.get("rejection_sample_method", "")).strip().lower() != "synthetic":
        return LaunchSpec(method, draft_tokens)
    if config.get("synthetic_acceptance_length") is not None:
        al = _number(config["synthetic_acceptance_length"], f"{field}.synthetic_acceptance_length")
        return LaunchSpec(method, draft_tokens, al, f"{field}.synthetic_acceptance_length={al:g}")
    rates = config.get("synthetic_acceptance_rates")
    if isinstance(rates, list) and rates:
        shares = [_number(r, f"{field}.synthetic_acceptance_rates") for r in rates]
        if any(not 0 <= p <= 1 for p in shares):
            raise LaunchError(f"{field}.synthetic_acceptance_rates must lie in [0, 1], got {rates!r}",
                              f"{field}.synthetic_acceptance_rates")
        return LaunchSpec(method, draft_tokens, 1.0 + sum(shares),
                          f"{field}.synthetic_acceptance_rates={shares!r}")
    raise LaunchError(f"{field}: rejection_sample_method synthetic without synthetic_acceptance_length or "
                      "synthetic_acceptance_rates", f"{field}.rejection_sample_method")


def _sglang_method(algorithm: str, has_draft_model: bool) -> str:
    """SGLang runs DeepSeek-style MTP through EAGLE/NEXTN with the model's own next-n layers (no draft path)."""
    key = algorithm.strip().lower()
    if key in ("eagle", "nextn") and not has_draft_model:
        return "mtp"
    return normalize_spec_method(key)


# --- collecting settings from a parsed document --------------------------------------------------------
@dataclass
class _Found:
    values: dict  # knob -> [(where, value)]

    def add(self, knob: str, where: str, value: Any) -> None:
        self.values.setdefault(knob, []).append((where, value))

    def one(self, knob: str):
        """(where, value) of the knob, decode/aggregated settings before prefill ones; None when unset."""
        found = self.values.get(knob) or []
        serving = [(w, v) for w, v in found if "prefill" not in w.lower()] or found
        if not serving:
            return None
        distinct = {json.dumps(v, sort_keys=True, default=str) for _, v in serving}
        if len(distinct) > 1:
            places = "; ".join(f"{w} = {v!r}" for w, v in serving)
            raise LaunchError(f"{knob} set to different values: {places}", serving[0][0])
        return serving[0]


def _walk(node: Any, path: str, found: _Found, depth: int = 0) -> None:
    if depth > 40:
        raise LaunchError("launch settings nested too deeply")
    if isinstance(node, dict):
        for key, value in node.items():
            where = f"{path}.{key}" if path else str(key)
            name = str(key)
            if name in ENV_KNOBS:
                found.add(name, where, value)
            elif name.lower() in _SPEC_CONFIG_KEYS and not isinstance(value, list):
                if value is not None and str(value).strip().lower() not in ("", "none", "null"):
                    found.add("speculative_config", where, _spec_config(value, where))
                continue
            elif name.lower() in _SGLANG_ALGORITHM + _SGLANG_STEPS + _SGLANG_DRAFT + _SGLANG_DRAFT_MODEL + _ATOM_AL \
                    + ("spec-decoding", "spec_decoding"):  # the last: InferenceX master-config and result field
                found.add(name.lower().replace("_", "-"), where, value)
            _walk(value, where, found, depth + 1)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            m = _ASSIGNMENT.match(value) if isinstance(value, str) else None
            if m and m.group("key") in ENV_KNOBS:  # "KEY=VALUE" settings lists
                found.add(m.group("key"), f"{path}[{i}]", m.group("value").strip("'\""))
            else:
                _walk(value, f"{path}[{i}]", found, depth + 1)


_ENV_LINE = re.compile(r"(?:^|[\s;\"'-])(?:export\s+)?(?P<key>SGLANG_SIMULATE_ACC_LEN|TLLM_SPEC_DECODE_FORCE_NUM_"
                       r"ACCEPTED_TOKENS|SYNTHETIC_ACCEPTANCE_LENGTH|SYNTHETIC_ACCEPTANCE)=[\"']?(?P<value>[^\s;\"']+)")
_FLAG = re.compile(r"--(?P<key>speculative[-_]algorithm|speculative[-_]num[-_]steps|speculative[-_]num[-_]draft[-_]"
                   r"tokens|speculative[-_]draft[-_]model[-_]path|spec[-_]decode[-_]acceptance[-_]length)"
                   r"[=\s]+[\"']?(?P<value>[^\s\"']+)")
_SPEC_FLAG = re.compile(r"(?:--speculative[-_]config[=\s]+|speculative_config\s*[=:]\s*)(?P<quote>['\"]?)(?P<body>\{)")


def _balanced(text: str, start: int) -> str | None:
    """The ``{...}`` starting at ``start`` (braces balanced, quoted braces ignored), or None when cut off."""
    depth, quote = 0, None
    for i in range(start, min(len(text), start + 20000)):
        ch = text[i]
        if quote:
            if ch == quote and text[i - 1] != "\\":
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
    return None


def _scan_text(text: str, found: _Found) -> None:
    """Settings written as shell lines, command-line flags or a server log's argument dump."""
    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("#") or re.match(r"^unset\s", stripped):
            continue
        where = f"line {lineno}"
        for m in _ENV_LINE.finditer(line):
            found.add(m.group("key"), where, m.group("value"))
        for m in _FLAG.finditer(line):
            found.add(m.group("key").replace("_", "-"), where, m.group("value"))
        for m in _SPEC_FLAG.finditer(line):
            body = _balanced(line, m.start("body"))
            if body is None:
                raise LaunchError(f"speculative config cut off: {line[m.start('body'):][:80]!r}", where)
            found.add("speculative_config", f"{where}: speculative_config", _spec_config(body, where))
        # vLLM server log: non-default args: {..., 'speculative_config': {...}}
        for m in re.finditer(r"'speculative_config':\s*(?P<body>\{)", line):
            body = _balanced(line, m.start("body"))
            if body is not None:
                found.add("speculative_config", f"{where}: speculative_config", _spec_config(body, where))


def _resolve(found: _Found) -> LaunchSpec:
    method: str | None = None
    draft: float | None = None
    forced: tuple[float, str] | None = None

    config = found.one("speculative_config")
    if config is not None:
        where, value = config
        spec = from_vllm_config(value, where)
        method, draft = spec.spec_method, spec.draft_tokens
        if spec.forced_by:
            forced = (spec.acceptance_length, spec.forced_by)
    named = found.one("spec-decoding")
    if named is not None and method is None:
        method = normalize_spec_method(named[1])
    algorithm = found.one("speculative-algorithm")
    if algorithm is not None:
        method = _sglang_method(str(algorithm[1]), found.one("speculative-draft-model-path") is not None)
    drafts = found.one("speculative-num-draft-tokens")
    steps = found.one("speculative-num-steps")
    if drafts is not None:
        draft = _number(drafts[1], drafts[0]) - 1.0  # SGLang counts the verified root token among its drafts
    elif steps is not None:
        draft = _number(steps[1], steps[0])

    unknown_value: str | None = None  # forced, but to a value the file does not hold
    switch = found.one(INFERENCEX_SWITCH)
    switched_on = switch is not None and str(switch[1]).strip().lower() == "true"
    knobs = FORCE_AL + FORCE_DRAFT_ONLY + ("spec-decode-acceptance-length",) + ((INFERENCEX_LENGTH,) if switched_on
                                                                              else ())
    for knob in knobs:
        got = found.one(knob)
        if got is None:
            continue
        where, value = got
        try:
            x = _number(value, knob)
        except LaunchError:
            if re.fullmatch(r"\$\{?\w+\}?|\$\(.*\)", str(value).strip()):  # set from a shell variable
                unknown_value = f"{knob}={value} at {where} (the value is not in the file)"
                continue
            raise
        al = x + 1.0 if knob in FORCE_DRAFT_ONLY else x
        setting = f"{knob}={x:g}" + (" (accepted draft tokens; AL = value + 1)" if knob in FORCE_DRAFT_ONLY else "")
        if forced is not None and abs(forced[0] - al) > 1e-9:
            raise LaunchError(f"two forced acceptance lengths: {forced[1]} and {setting} ({where})", knob)
        forced = (al, f"{setting} at {where}")
    if forced is None and switched_on:
        unknown_value = (f"{INFERENCEX_SWITCH}=true at {switch[0]} without {INFERENCEX_LENGTH} (InferenceX injects "
                         "the golden curve's value; not in the file)")
    if forced is None and unknown_value is not None:
        return LaunchSpec(method, draft, None, unknown_value)
    if forced is not None:
        al, by = forced
        if al < 1:
            raise LaunchError(f"forced acceptance length {al:g} is below 1 ({by})", by.split("=", 1)[0])
        if draft is not None and al > draft + 1 + 1e-9:
            raise LaunchError(f"forced acceptance length {al:g} exceeds {draft:g} drafted + 1 ({by})",
                              by.split("=", 1)[0])
        return LaunchSpec(method, draft, al, by)
    return LaunchSpec(method, draft)


def read_launch_settings(path: Path | str) -> LaunchSpec:
    """What the launch settings in ``path`` say about speculative decoding; :class:`LaunchError` when unreadable."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_BYTES:
            raise LaunchError(f"launch settings file larger than {MAX_BYTES // 2**20} MB; name a recipe, command or "
                              "the head of the server log")
        text = path.read_bytes().decode("utf-8-sig", errors="replace")
    except OSError as err:
        raise LaunchError(f"cannot read launch settings: {err.strerror or err}") from None
    found = _Found({})
    doc = None
    if path.suffix.lower() in (".yaml", ".yml", ".json"):
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as err:
            raise LaunchError(f"not valid YAML/JSON: {str(err).splitlines()[0]}") from None
    if isinstance(doc, (dict, list)):
        _walk(doc, "", found)
    else:
        _scan_text(text, found)
    return _resolve(found)
