"""``python -m train tune-weights``: learn RaTEScore's affinity matrix W and penalty p with TPE
(SPEC §1.9), from precomputed entities, embeddings and best matches.

Modules: :mod:`~train.tune.config` (the YAML config), :mod:`~train.tune.data` (rated pairs and
their split by group), :mod:`~train.tune.precompute` (the W-free tables and their disk cache),
:mod:`~train.tune.search` (optuna study, objective, workers), :mod:`~train.tune.report` (table,
report.json, figures) and :mod:`~train.tune.cli` (the command).
"""
