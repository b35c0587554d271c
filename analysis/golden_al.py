"""InferenceX's golden acceptance-length curves (``data/specs/golden_al/*.yaml``, copied unmodified).

Each file maps a model, a thinking mode and a draft length (``num_speculative_tokens``) to the mean acceptance
length (AL: tokens committed per verify step, the bonus token included) measured with real speculative decoding on
the coding category of SPEED-Bench's Qualitative split (vLLM on B300); InferenceX's AgentX lane pins submissions to
these values through synthetic acceptance. The file's comment header names the method (``key =
num_speculative_tokens (MTP level)``, or a ``method: dspark`` line in newer files) and the run that measured it
(first line). See
``data/specs/golden_al/PROVENANCE.md`` for the source commit and the licence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pandas as pd
import yaml

from analysis import config, specs
from analysis.schema import UNKNOWN, normalize_spec_method

GOLDEN_DIR = config.SPECS_DIR / "golden_al"
# Precision words InferenceX appends to a model key ("kimi-k2.5-nvfp4", "glm-5.2-fp8"): not part of the model's name.
_PRECISION_TOKEN = re.compile(r"[-_ ](?:nvfp4|mxfp4|fp4|fp8|int4|int8|bf16|fp16)$", re.IGNORECASE)
_METHOD_LINE = re.compile(r"^#\s*key\s*=\s*num_speculative_tokens\s*\((?P<method>[^)]*?)\s+level\)", re.MULTILINE)
# newer files name it on a line of their own ("# method: dspark | draft_sample_method: ...")
_METHOD_FIELD = re.compile(r"^#\s*method:\s*(?P<method>[A-Za-z0-9_.-]+)", re.MULTILINE)
_RUN_LINE = re.compile(r"^#\s*Source GitHub Actions run:\s*(?P<url>\S+)", re.MULTILINE)
_DATASET_LINE = re.compile(r"^#\s*dataset:\s*(?P<dataset>.+)$", re.MULTILINE)


class GoldenError(ValueError):
    """A golden-curve file that cannot be read; the message names the file and the key."""


@dataclass(frozen=True)
class GoldenCurve:
    """One (file, model, thinking mode) curve: acceptance length by drafted tokens."""

    file: str
    model: str
    method: str
    mode: str
    values: tuple[tuple[int, float], ...]
    source_run: str
    dataset: str

    def at(self, draft_tokens: float) -> float | None:
        """The golden AL for ``draft_tokens`` drafted per step, None when the curve has no such draft length."""
        return dict(self.values).get(int(draft_tokens)) if float(draft_tokens).is_integer() else None


def model_key(name: str) -> str:
    """A model name compared across spellings: organisation and precision suffix dropped, case and punctuation
    ignored (``nvidia/Kimi-K2.5-NVFP4`` and ``kimi-k2.5-nvfp4`` and ``Kimi-K2.5`` are one key)."""
    text = str(name).strip().rsplit("/", 1)[-1]
    while _PRECISION_TOKEN.search(text):
        text = _PRECISION_TOKEN.sub("", text)
    return specs.normalize_name(text)


def _read(path: Path) -> list[GoldenCurve]:
    text = path.read_text(encoding="utf-8")
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise GoldenError(f"{path.name}: not valid YAML: {str(err).splitlines()[0]}") from None
    if not isinstance(doc, dict) or not doc:
        raise GoldenError(f"{path.name}: expected a mapping model -> thinking mode -> draft length -> AL")
    m = _METHOD_LINE.search(text) or _METHOD_FIELD.search(text)
    method = normalize_spec_method(m.group("method")) if m else UNKNOWN
    run = _RUN_LINE.search(text)
    dataset = _DATASET_LINE.search(text)
    curves = []
    for model, modes in doc.items():
        if not isinstance(modes, dict):
            raise GoldenError(f"{path.name}: {model}: expected thinking modes (thinking_on / thinking_off)")
        for mode, table in modes.items():
            if not isinstance(table, dict) or not table:
                raise GoldenError(f"{path.name}: {model}.{mode}: expected draft length -> acceptance length")
            values = []
            for draft, al in table.items():
                where = f"{path.name}: {model}.{mode}.{draft}"
                if isinstance(draft, bool) or not isinstance(draft, int) or draft < 1:
                    raise GoldenError(f"{where}: a draft length must be a whole number >= 1")
                if isinstance(al, bool) or not isinstance(al, (int, float)) or not 1 <= al <= draft + 1:
                    raise GoldenError(f"{where}: acceptance length {al!r} must lie in [1, {draft + 1}]")
                values.append((draft, float(al)))
            curves.append(GoldenCurve(file=path.name, model=str(model), method=method, mode=str(mode),
                                      values=tuple(sorted(values)), source_run=run.group("url") if run else "",
                                      dataset=dataset.group("dataset").strip() if dataset else ""))
    return curves


@lru_cache(maxsize=4)
def _curves(folder: str) -> tuple[GoldenCurve, ...]:
    found = []
    for path in sorted(Path(folder).glob("*.yaml")):
        found.extend(_read(path))
    return tuple(found)


def golden_curves(folder: Path | str | None = None) -> tuple[GoldenCurve, ...]:
    """Every curve of every file in ``folder`` (default ``data/specs/golden_al``), files in name order."""
    return _curves(str(folder or GOLDEN_DIR))


def golden_table(folder: Path | str | None = None) -> pd.DataFrame:
    """One row per (file, model, mode, draft length): ``acceptance_length`` and where it comes from."""
    rows = [{"file": c.file, "model": c.model, "method": c.method, "mode": c.mode, "draft_tokens": d,
             "acceptance_length": al, "source_run": c.source_run, "dataset": c.dataset}
            for c in golden_curves(folder) for d, al in c.values]
    return pd.DataFrame(rows, columns=["file", "model", "method", "mode", "draft_tokens", "acceptance_length",
                                       "source_run", "dataset"])


PREFERRED_MODE = "thinking_on"  # what InferenceX's AgentX recipes pin (e.g. DeepSeek-V4 MTP-3: 2.49, GLM-5.2 MTP-5: 3.61)


def golden_for(model: str, method: str, draft_tokens: float, *, mode: str | None = None,
               folder: Path | str | None = None) -> tuple[float, GoldenCurve, int] | None:
    """(AL, curve, other matching curves) for a model, method and draft length; None when no curve has them.

    ``mode`` picks a thinking mode; without one, ``thinking_on`` is used where the curve has it. Several files can
    hold the same model and method (MiniMax-M3 EAGLE3 with and without the GQA draft): the one with the shortest
    file name (the base curve) is used, and the count of the others is returned so a reader can say so.
    """
    if draft_tokens is None or draft_tokens != draft_tokens:
        return None
    key, method = model_key(model), normalize_spec_method(method)
    matches = [c for c in golden_curves(folder) if model_key(c.model) == key and c.method == method
               and c.at(draft_tokens) is not None]
    if mode is not None:
        matches = [c for c in matches if c.mode == mode]
    elif any(c.mode == PREFERRED_MODE for c in matches):
        matches = [c for c in matches if c.mode == PREFERRED_MODE]
    if not matches:
        return None
    matches.sort(key=lambda c: (len(c.file), c.file, c.mode))
    best = matches[0]
    others = len({c.file for c in matches}) - 1
    return best.at(draft_tokens), best, others
