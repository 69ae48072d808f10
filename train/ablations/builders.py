"""Every ablation table by name: the one place that knows both table modules.

:mod:`train.ablations.tables` (the tables built from training runs, and the helpers every table
uses) <- :mod:`train.ablations.tables_metrics` (the meta-evaluation tables) <- this module, so the
imports run one way.
"""

from __future__ import annotations

from typing import Callable

from train.ablations import tables
from train.ablations import tables_metrics
from train.ablations.render import Table


def builders() -> dict[str, Callable[[tables.Context], Table]]:
    return {"ner-schemes": tables.build_ner_schemes, "ner-data": tables.build_ner_data,
            "encoders": tables.build_encoders, "rexval": tables_metrics.build_rexval,
            "rate-eval": tables_metrics.build_rate_eval, "er2-criteria": tables_metrics.build_er2_criteria,
            "er2-metrics": tables_metrics.build_er2_metrics, "er2-backbones": tables.build_er2_backbones,
            "er2-loss": tables.build_er2_loss, "er2-lambda": tables.build_er2_lambda}
