"""The performance model's fit and validation on the shipped points, timed: ``perfclaims model --validate`` and
the calibration behind ``perfclaims model --config`` (training table, calibration, 20 bootstrap draws).

Target (issue 24): fit + validation of every shipped group in under 30 s on two cores. Wall and CPU time of each
step in this process, after the imports (a warm-up imports and reads the points table first).

    .venv/bin/python bench/perfmodel_speed.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TARGET_S = 30.0
N_BOOT = 20


def run() -> dict:
    import pandas as pd

    from analysis import config
    from analysis.perfmodel import calibrate as cb
    from analysis.perfmodel import validate as va

    points = pd.read_parquet(config.POINTS_FILE)
    out = {}

    def timed(name, fn):
        w, c = time.perf_counter(), time.process_time()
        value = fn()
        out[name] = {"wall_s": time.perf_counter() - w, "cpu_s": time.process_time() - c}
        return value

    train = timed("training table", lambda: cb.training_table(points))
    cal = timed("calibration", lambda: cb.calibrate(train))
    timed(f"bootstrap ({N_BOOT} draws, every cell)", lambda: cb.bootstrap(train, cal, n_boot=N_BOOT))
    rep = timed("validation (leave each group out)", lambda: va.validate(points))
    out["groups"] = rep["n_groups"]
    out["training_groups"] = rep["training_groups"]
    out["total_wall_s"] = sum(v["wall_s"] for k, v in out.items() if isinstance(v, dict))
    out["median_error_tok_s_per_user"] = rep["median_error_tok_s_per_user"]
    out["median_error_tok_s_per_gpu"] = rep["median_error_tok_s_per_gpu"]
    return out


def print_report(res: dict) -> bool:
    for k, v in res.items():
        if isinstance(v, dict):
            print(f"{k:<40s}{v['wall_s']:>8.2f} s wall{v['cpu_s']:>8.2f} s cpu")
    ok = res["total_wall_s"] <= TARGET_S
    print(f"{'fit + validation, all shipped groups':<40s}{res['total_wall_s']:>8.2f} s  (target <= {TARGET_S:g} s: "
          f"{'ok' if ok else 'MISSED'}); {res['groups']} validated groups of {res['training_groups']}")
    return ok


if __name__ == "__main__":
    sys.exit(0 if print_report(run()) else 1)
