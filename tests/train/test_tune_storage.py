"""The SQLite study storage under several processes: an enqueued (WAITING) trial is claimed by
exactly one worker. SQLite ignores ``SELECT … FOR UPDATE``; without ``BEGIN IMMEDIATE`` two
workers read the same WAITING trial and both run it, and the second ``tell`` fails with
"Cannot tell a COMPLETE trial" (the CI failure of 2026-11)."""

from __future__ import annotations

import multiprocessing

import optuna

from train.tune.search import make_storage

N_ENQUEUED = 40


def _objective(trial):
    return trial.suggest_float("x", 0.0, 1.0)


def _drain(url: str, name: str, start, errors) -> None:
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    study = optuna.load_study(study_name=name, storage=make_storage(url))
    start.wait(timeout=120)
    try:
        study.optimize(_objective, n_trials=N_ENQUEUED // 2 + 5, gc_after_trial=False)
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        errors.put(f"{type(exc).__name__}: {exc}")


def test_two_processes_never_run_the_same_enqueued_trial(tmp_path):
    url = f"sqlite:///{tmp_path / 'race.db'}"
    study = optuna.create_study(study_name="race", storage=make_storage(url), direction="maximize")
    for k in range(N_ENQUEUED):
        study.enqueue_trial({"x": k / N_ENQUEUED})
    ctx = multiprocessing.get_context("spawn")
    start, errors = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_drain, args=(url, "race", start, errors)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    assert [p.exitcode for p in procs] == [0, 0]
    assert errors.empty(), errors.get()
    trials = optuna.load_study(study_name="race", storage=make_storage(url)).trials
    states = {t.state for t in trials}
    assert states == {optuna.trial.TrialState.COMPLETE}, states
    enqueued = sorted(t.params["x"] for t in trials if "fixed_params" in t.system_attrs)
    assert enqueued == [k / N_ENQUEUED for k in range(N_ENQUEUED)]  # each exactly once
    assert len(trials) == 2 * (N_ENQUEUED // 2 + 5)
