"""The batch model: decode step time against batch size and context, fitted per configuration.

A decode step for ``B`` sequences at mean context ``L`` costs ``t(B, L) = t0 + t1·B + t2·B·L`` ms (dense: weights
once, per-sequence work, KV reads); the MoE-aware form adds ``tm·C(B)``, the expert weights of the ``C(B)``
distinct experts the batch touches. Coefficients are fitted per group by bounded robust least squares on relative
residuals, with physical lower bounds where the geometry and measured ceilings are known; the form is chosen by
leave-one-batch-out cross-validation, and every derived number carries a bootstrap interval.

Modules, in the order data flows through them:

- :mod:`~analysis.scaling.inputs` — points into batch, context, step time; the groups and their labels
- :mod:`~analysis.scaling.estimator` — the array-level estimator (:func:`fit_step_times`, :func:`solve`)
- :mod:`~analysis.scaling.floors` — physical lower bounds of t1/t2 from the step logs' records
- :mod:`~analysis.scaling.configuration` — one configuration: MoE geometry, dense against MoE
- :mod:`~analysis.scaling.fitting` — the group-by wrapper (:func:`fit`, :func:`fit_with_draws`): groups' solves
  stacked together, batches of groups in worker processes (:mod:`~analysis.scaling.workers`)
- :mod:`~analysis.scaling.derived` — peak, largest batch, asymptote, B½ per draw
- :mod:`~analysis.scaling.prediction` — predictions with bands, curves, residuals, extrapolation factor
- :mod:`~analysis.scaling.extrapolation` — fit on small batches, check the large ones
- :mod:`~analysis.scaling.tables` — summary, floors, one group, headline numbers
- :mod:`~analysis.scaling.words` — sentences (Markdown escaped through :mod:`analysis.text`)
"""

from analysis.scaling.configuration import VARIANTS, GroupFit, coverage, fit_group, moe_geometry, spec_geometry
from analysis.scaling.derived import UNIDENTIFIED_FACTOR, identified
from analysis.scaling.estimator import COEFS, F_SCALE, BatchFit, FitError, ScalingWarning, fit_step_times, solve
from analysis.scaling.extrapolation import batch_list, extrapolation_check, extrapolation_summary
from analysis.scaling.fitting import LEVELS_TOK_S_PER_USER, Fits, fit, fit_with_draws
from analysis.scaling.floors import HOST_BOUND_FRAMEWORKS, floor_inputs, sequence_floors
from analysis.scaling.inputs import DEFAULT_BY, MIN_BATCHES, group_label, groups, prepare
from analysis.scaling.prediction import (
                                         MAX_EXTRAPOLATION,
                                         curves,
                                         extrapolation_factor,
                                         extrapolation_report,
                                         fitted,
                                         launch_overhead,
                                         predict,
                                         residuals,
)
from analysis.scaling.tables import FLOOR_COLUMNS, SUMMARY_COLUMNS, floors_table, headline_numbers, select, summary
from analysis.scaling.words import describe, headline, shard_note, short_headline

__all__ = [
    "BatchFit", "COEFS", "DEFAULT_BY", "F_SCALE", "FLOOR_COLUMNS", "FitError", "Fits", "GroupFit",
    "HOST_BOUND_FRAMEWORKS", "LEVELS_TOK_S_PER_USER", "MAX_EXTRAPOLATION", "MIN_BATCHES", "SUMMARY_COLUMNS",
    "ScalingWarning", "UNIDENTIFIED_FACTOR", "VARIANTS", "batch_list", "coverage", "curves", "describe",
    "extrapolation_check", "extrapolation_factor", "extrapolation_report", "extrapolation_summary", "fit",
    "fit_group", "fit_step_times", "fit_with_draws", "fitted", "floor_inputs", "floors_table", "group_label",
    "groups", "headline", "headline_numbers", "identified", "launch_overhead", "moe_geometry", "predict",
    "prepare", "residuals", "select", "sequence_floors", "shard_note", "short_headline", "solve", "spec_geometry",
    "summary",
]
