"""The TPE search over the 25 entries of ``W`` and the penalty ``p`` (SPEC §1.9), with optuna.

- Parameters are named by their official JSON keys (``"abnormality_anatomy"``, …,
  ``"neg_weight"``), so a trial's parameters are an official affinity matrix as they stand.
- The objective is ``sign * correlation(RaTEScore, rating)`` over the training pairs, from the
  precomputed tables (:class:`train.tune.precompute.PairTables`): no model runs in a trial. An
  undefined correlation (every score equal) counts as 0 (our choice: no agreement), and the trial
  carries the user attribute ``undefined_correlation``.
- The study lives in a storage given by URL: an RDB URL (``sqlite:///…``, ``postgresql://…``,
  ``mysql://…``) or ``journal:<file>`` (optuna's journal file). SQLite files are opened in WAL
  mode with a 60 s busy timeout and every transaction begins IMMEDIATE (write lock first), so
  several processes share one file and an enqueued trial is claimed by one worker only. A study remembers what it
  was started on (data, split, objective, models, ranges) and refuses to resume on anything else.
- ``n_trials`` is the number of COMPLETE trials the study should hold in total: a killed search
  resumes where it stopped (a trial cut short stays RUNNING and does not count), and ``workers``
  processes run on one study until the total is reached (each may finish the trial it holds, so
  the total can exceed ``n_trials`` by up to ``workers - 1``).
- ``enqueue``: matrices evaluated first (optuna's enqueued trials, added once per study), e.g. the
  uniform matrix: a neutral starting point that TPE's box rarely reaches by chance (every weight
  equal and ``p`` = 1 lie in a corner), so the search never ends below it on the training split.
- Worker ``k`` seeds its TPESampler with ``(sampler_seed, k, complete trials at its start)``, so a
  fresh single-process search is reproducible. A single process also keeps the sampler's random
  state in every trial it completes (:class:`ResumableTPESampler`); a killed search resumes from the
  state its last complete trial left, so it ends with the trials (and the best value) of the
  uninterrupted search. Workers sharing a study draw from their own seeds, with constant_liar.
"""

from __future__ import annotations

import base64
import json
import math
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import optuna

from radscore.labels import ENTITY_TYPES
from radscore.scoring import PENALTY_KEY, AffinityMatrix, official_key
from train.evaluation.metaeval import correlation
from train.tune.precompute import PairTables

FINGERPRINT_ATTR = "radscore_tune"
PARAM_NAMES = [official_key(a, b) for a in ENTITY_TYPES for b in ENTITY_TYPES]  # row-major W


class StudyMismatchError(ValueError):
    """The storage holds a study of the same name that was started on another setup."""


# ---- storage and study ---------------------------------------------------------------------
def make_storage(url: str):
    """An optuna storage for ``url`` (see the module doc)."""
    import sqlalchemy

    if url.startswith("journal:"):
        from optuna.storages.journal import JournalFileBackend

        path = Path(url[len("journal:"):])
        path.parent.mkdir(parents=True, exist_ok=True)
        return optuna.storages.JournalStorage(JournalFileBackend(str(path)))
    if url.startswith("sqlite:///"):
        path = Path(url[len("sqlite:///"):])
        path.parent.mkdir(parents=True, exist_ok=True)

        def connect():
            # isolation_level=None: the driver opens no transactions of its own (its default
            # runs SELECTs outside any transaction); the "begin" hook below opens them instead.
            conn = sqlite3.connect(str(path), timeout=60.0, check_same_thread=False,
                                   isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")  # readers and a writer at once: several workers
            conn.execute("PRAGMA synchronous=NORMAL")  # safe in WAL mode, and far fewer fsyncs
            return conn

        storage = optuna.storages.RDBStorage(url, engine_kwargs={"creator": connect})
        # SQLite ignores SELECT ... FOR UPDATE, so optuna's claim of an enqueued (WAITING) trial
        # (read the state, then set RUNNING) is a race between processes: two workers ran the
        # same trial and the second tell failed. BEGIN IMMEDIATE takes the write lock at the
        # start of every transaction, so the read and the write are one atomic step.
        sqlalchemy.event.listen(storage.engine, "begin",
                                lambda conn: conn.exec_driver_sql("BEGIN IMMEDIATE"))
        return storage
    return optuna.storages.RDBStorage(url)


def open_study(storage, name: str, fingerprint: dict, create: bool = True):
    """Load the study ``name`` (creating it when ``create``) and check that its fingerprint is
    ``fingerprint``."""

    if create:
        study = optuna.create_study(storage=storage, study_name=name, direction="maximize", load_if_exists=True)
    else:
        study = optuna.load_study(storage=storage, study_name=name)
    stored = study.user_attrs.get(FINGERPRINT_ATTR)
    if stored is None:
        if study.trials:
            raise StudyMismatchError(f"study {name!r} holds trials but no {FINGERPRINT_ATTR!r} record: "
                                     "it was not made by tune-weights; use another study_name")
        study.set_user_attr(FINGERPRINT_ATTR, fingerprint)
    elif stored != fingerprint:
        differ = sorted(k for k in set(stored) | set(fingerprint) if stored.get(k) != fingerprint.get(k))
        raise StudyMismatchError(
            f"study {name!r} was started on another setup (differs in: {', '.join(differ)}); delete its "
            "storage (e.g. checkpoints/tune/<config>/study.db) or set search.study_name to start anew")
    return study


def complete_trials(study) -> list:
    from optuna.trial import TrialState

    return study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))


def matrix_from_params(params: dict) -> AffinityMatrix:
    return AffinityMatrix.from_official({k: params[k] for k in [*PARAM_NAMES, PENALTY_KEY]}, "trial parameters")


def best_matrix(study) -> AffinityMatrix:
    return matrix_from_params(study.best_params)


def enqueue_params(spec, weight_range, penalty_range) -> dict:
    """The trial parameters of a matrix to evaluate first: ``"uniform"`` (every weight the top of
    ``weight_range``, ``p`` = 1: the plain mean best cosine), ``"long"``, ``"short"`` or a JSON
    path. Its values must lie in the search ranges."""
    from radscore.scoring import resolve_matrix

    if spec == "uniform":
        matrix = AffinityMatrix.uniform(float(weight_range[1]), 1.0)
    else:
        matrix = resolve_matrix(spec)
    params = matrix.to_official()
    outside = [k for k, v in params.items()
               if not (float((penalty_range if k == PENALTY_KEY else weight_range)[0]) <= v
                       <= float((penalty_range if k == PENALTY_KEY else weight_range)[1]))]
    if outside:
        raise ValueError(f"search.enqueue: matrix {spec!r} has values outside the search ranges at {outside}")
    return params


# ---- the objective -------------------------------------------------------------------------
@dataclass
class Objective:
    """``sign * correlation`` of the scores of ``tables`` with ``ratings`` for a trial's W and p."""

    tables: PairTables
    ratings: np.ndarray
    method: str
    sign: float
    weight_range: tuple[float, float] = (0.0, 1.0)
    penalty_range: tuple[float, float] = (0.0, 1.0)

    def value(self, weights: np.ndarray, penalty: float) -> float:
        return self.sign * correlation(self.tables.scores(weights, penalty), self.ratings, self.method)

    def __call__(self, trial) -> float:
        lo, hi = map(float, self.weight_range)
        w = np.array([trial.suggest_float(k, lo, hi) for k in PARAM_NAMES]).reshape(len(ENTITY_TYPES), -1)
        p = trial.suggest_float(PENALTY_KEY, *map(float, self.penalty_range))
        value = self.value(w, p)
        if math.isnan(value):
            trial.set_user_attr("undefined_correlation", True)
            return 0.0
        return value


def trial_seed(seed: int, worker: int, done: int) -> int:
    """The seed of worker ``worker``'s sampler when it starts on a study of ``done`` complete trials."""
    return int(np.random.SeedSequence([int(seed), int(worker), int(done)]).generate_state(1)[0])


STATE_KEY = "radscore:sampler_state"
_CHUNK = 2000  # characters per system attribute (optuna's RDB limit for MySQL is 2045)


def _rng_states(sampler) -> str:
    """The numpy states of a TPESampler and of its startup RandomSampler, as one string."""
    def pack(rng):
        name, keys, pos, has_gauss, gauss = rng.get_state()
        return [name, base64.b64encode(np.asarray(keys, dtype="<u4").tobytes()).decode(), int(pos), int(has_gauss),
                float(gauss)]

    return json.dumps([pack(sampler._rng.rng), pack(sampler._random_sampler._rng.rng)])


def _set_rng_states(sampler, text: str) -> None:
    def unpack(rng, packed):
        name, keys, pos, has_gauss, gauss = packed
        rng.set_state((name, np.frombuffer(base64.b64decode(keys), dtype="<u4").astype(np.uint32), pos, has_gauss,
                       gauss))

    tpe, startup = json.loads(text)
    unpack(sampler._rng.rng, tpe)
    unpack(sampler._random_sampler._rng.rng, startup)


def saved_rng_states(trial) -> str | None:
    """The sampler state a trial completed by :class:`ResumableTPESampler` left (None for others)."""
    parts = sorted((int(k.rsplit(":", 1)[1]), v) for k, v in trial.system_attrs.items() if k.startswith(STATE_KEY))
    return "".join(v for _, v in parts) or None


def make_sampler(seed: int, worker: int, done: int, multivariate: bool, n_startup_trials: int,
                 constant_liar: bool = True):
    """A :class:`ResumableTPESampler` seeded with :func:`trial_seed`. ``constant_liar`` (optuna's
    default, for workers sharing a study): running trials count as bad ones; a single process turns
    it off, so a trial a kill cut short (it stays RUNNING) does not steer the resumed search. Alone in
    its study, the current trial is the only running one, which constant_liar leaves out: the
    draws of an uninterrupted search are the same either way."""
    return ResumableTPESampler(seed=trial_seed(seed, worker, done), multivariate=multivariate,
                               n_startup_trials=int(n_startup_trials), constant_liar=constant_liar)


class ResumableTPESampler(optuna.samplers.TPESampler):
    """A TPESampler that writes its random state into each trial it finishes, before the trial is
    marked complete (``after_trial``). Nothing is drawn between that moment and the next trial's
    sampling, so the state of a study's last complete trial is the one its next trial starts from."""

    def after_trial(self, study, trial, state, values) -> None:
        super().after_trial(study, trial, state, values)
        text = _rng_states(self)
        for i in range(0, len(text), _CHUNK):
            study._storage.set_trial_system_attr(trial._trial_id, f"{STATE_KEY}:{i // _CHUNK}", text[i:i + _CHUNK])

    def resume_from(self, study) -> int | None:
        """Take the random state the study's last complete trial left; that trial's number, or None
        when it has none (a study begun by a version that did not keep it)."""
        trials = complete_trials(study)
        if not trials:
            return None
        last = max(trials, key=lambda t: t.number)
        text = saved_rng_states(last)
        if text is None:
            return None
        _set_rng_states(self, text)
        return last.number


@dataclass
class SearchJob:
    """What a worker process needs (picklable)."""

    storage_url: str
    study_name: str
    fingerprint: dict
    objective: Objective
    n_trials: int
    sampler_seed: int
    multivariate: bool
    n_startup_trials: int
    enqueue: tuple = ()  # official dicts


def _optimize(job: SearchJob, worker: int, on_trial=None, ready=None, shared: bool = True) -> int:
    """Run trials until the study holds ``job.n_trials`` complete ones; returns how many ran here.
    ``ready``: a barrier the workers pass together once their study is open (none starts first);
    ``shared``: other workers run on the study at the same time."""
    from optuna.study import MaxTrialsCallback
    from optuna.trial import TrialState

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = open_study(make_storage(job.storage_url), job.study_name, job.fingerprint, create=False)
    if ready is not None:
        ready.wait(timeout=600)
    done = len(complete_trials(study))
    if done >= job.n_trials:
        return 0
    study.sampler = make_sampler(job.sampler_seed, worker, done, job.multivariate, job.n_startup_trials,
                                 constant_liar=shared)
    if done and not shared:
        number = study.sampler.resume_from(study)
        print(f"the sampler resumes from the random state trial {number} left" if number is not None else
              "the study's trials keep no sampler state (an older search): the sampler is seeded afresh", flush=True)
    ran = [0]

    def count(study_, trial):
        ran[0] += 1
        if on_trial is not None:
            on_trial(trial)

    study.optimize(job.objective, n_trials=job.n_trials - done, gc_after_trial=False,
                   callbacks=[count, MaxTrialsCallback(job.n_trials, states=(TrialState.COMPLETE,))])
    return ran[0]


def _worker(job: SearchJob, worker: int, results, ready) -> None:
    """A spawned worker process: reports ``(worker, trials run)`` on ``results``."""
    results.put((worker, _optimize(job, worker, ready=ready)))


def run_search(job: SearchJob, workers: int = 1, progress: bool = True) -> dict:
    """Run the search (in this process, or ``workers`` spawned processes) with a progress bar
    showing the best value so far. Returns a summary: trials before/after, per-worker counts and
    the wall time."""
    import multiprocessing

    from tqdm.auto import tqdm

    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    storage = make_storage(job.storage_url)
    study = open_study(storage, job.study_name, job.fingerprint, create=True)
    before = complete_trials(study)
    if before:
        print(f"resuming study {job.study_name!r} from {len(before)} complete trials", flush=True)
    if len(before) < job.n_trials:
        for params in job.enqueue:
            study.enqueue_trial(dict(params), skip_if_exists=True)
    best = max((t.value for t in before), default=-math.inf)
    t0 = time.perf_counter()
    per_worker: dict[int, int] = {}
    bar = tqdm(total=job.n_trials, initial=min(len(before), job.n_trials), desc="TPE", unit="trial",
               disable=not progress, dynamic_ncols=True)
    if math.isfinite(best):
        bar.set_postfix(best=f"{best:.4f}")
    try:
        if workers == 1:
            def on_trial(trial):
                nonlocal best
                if trial.value is not None:
                    best = max(best, trial.value)
                    bar.update(1)
                    bar.set_postfix(best=f"{best:.4f}")

            per_worker[0] = _optimize(job, 0, on_trial, shared=False)
        else:
            ctx = multiprocessing.get_context("spawn")
            results, ready = ctx.Queue(), ctx.Barrier(workers)
            procs = [ctx.Process(target=_worker, args=(job, k, results, ready), daemon=True)
                     for k in range(workers)]
            for p in procs:
                p.start()
            while any(p.is_alive() for p in procs):
                time.sleep(0.5)
                _refresh(bar, study)
            for p in procs:
                p.join()
            failed = [(k, p.exitcode) for k, p in enumerate(procs) if p.exitcode != 0]
            for _ in range(len(procs) - len(failed)):
                k, n = results.get(timeout=30)
                per_worker[k] = n
            if failed:
                raise RuntimeError(f"tune worker(s) failed (worker, exit code): {failed}; finished trials "
                                   f"are kept in {job.storage_url}, run the command again to resume")
            _refresh(bar, study)
    finally:
        bar.close()
    after = complete_trials(study)
    return {"complete_trials_before": len(before), "complete_trials_after": len(after),
            "trials_run": per_worker, "workers": workers, "seconds": round(time.perf_counter() - t0, 3),
            "storage": job.storage_url, "study_name": job.study_name}


def _refresh(bar, study) -> None:
    trials = complete_trials(study)
    bar.n = min(len(trials), bar.total)
    if trials:
        bar.set_postfix(best=f"{max(t.value for t in trials):.4f}", refresh=False)
    bar.refresh()
