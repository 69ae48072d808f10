"""Every ablation table by name: the one place that knows both table modules.

:mod:`train.ablations.tables` (the tables built from training runs, and the helpers every table
uses) <- :mod:`train.ablations.tables_metrics` (the meta-evaluation tables) <- this module, so the
imports run one way.
"""

from __future__ import annotations

from typing import Callable

from train.ablations import tables as T
from train.ablations import tables_metrics as M
from train.ablations.render import Table


def builders() -> dict[str, Callable[[T.Context], Table]]:
    return {"ner-schemes": T.build_ner_schemes, "ner-data": T.build_ner_data, "encoders": T.build_encoders,
            "rexval": M.build_rexval, "rate-eval": M.build_rate_eval, "er2-criteria": M.build_er2_criteria,
            "er2-metrics": M.build_er2_metrics, "er2-backbones": T.build_er2_backbones,
            "er2-loss": T.build_er2_loss, "er2-lambda": T.build_er2_lambda}
