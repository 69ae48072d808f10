"""The papers' ablation tables beside ours: ``python -m train ablations --table NAME --profile sample|paper``.

- :mod:`train.ablations.paper`: the published numbers and layouts (from SPEC), as data;
- :mod:`train.ablations.profile`: a profile (``configs/ablations/{sample,paper}.yaml``) says which
  data, models and training runs make our column;
- :mod:`train.ablations.runs`: finished runs are reused, missing ones trained with ``python -m train``;
- :mod:`train.ablations.evaluate`, :mod:`train.ablations.tables`, :mod:`train.ablations.tables_metrics`:
  the evaluation and one builder per table; :mod:`train.ablations.render`: markdown, CSV and JSON;
- :mod:`train.ablations.cli`: the command.
"""

from train.ablations.paper import PAPER_TABLES, TABLE_NAMES

__all__ = ["PAPER_TABLES", "TABLE_NAMES"]
