"""The one writer of the lab's results JSONs: every file a script here writes to ``benchmarks/results/``
carries the environment record of the run that wrote it.

    write_result(path, data, precision="bf16", seed=0, indent=1)

``write_result`` of ``benchmarks.results_file`` adds ``data["environment"]``, ``environment(precision=...,
seed=...)`` of ``radscore.environment`` (git commit and dirty flag, versions, CPU, hardware class, native
bf16, ATen capability, threads, kernel variables, GPU, precision, seed), unless the caller put one there
already, and writes the JSON atomically (``write_text_atomic`` of ``radscore.atomic``) with one trailing
newline. The keyword arguments are ``json.dumps``'s (``indent``, ``sort_keys``, ``ensure_ascii``,
``default``), so each script keeps its file's formatting.

``run_environment`` of ``benchmarks.results_file`` reads the record of a training run folder
(``environment.json``, written by ``record_environment`` of ``train.lightning.run_folder``): the last
``fit`` record, or None. Scripts that merge figures read from training runs store it beside each entry.
"""

from __future__ import annotations

import json
import os

from radscore.atomic import write_text_atomic
from radscore.environment import environment

KEY = "environment"


def write_result(path: str | os.PathLike, data: dict, *, precision: str | None = None, seed: int | None = None,
                 **json_options) -> dict:
    """Write ``data`` with its environment record to ``path`` (atomic); returns ``data``, record included."""
    if not isinstance(data, dict):
        raise TypeError(f"{path}: a results JSON is an object (got {type(data).__name__})")
    if data.get(KEY) is None:
        data[KEY] = environment(precision=precision, seed=seed)
    write_text_atomic(path, json.dumps(data, **json_options) + "\n")
    return data


def run_environment(run: str | os.PathLike) -> dict | None:
    """The last ``fit`` record of a training run folder's ``environment.json``, None when there is none
    (``fit_environment`` of ``train.lightning.run_folder.RunFolder``)."""
    from train.lightning.run_folder import RunFolder

    return RunFolder(run).fit_environment()
