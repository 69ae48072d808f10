"""The evaluation data and the metric scores behind our columns, each computed once per command.

- Data: ReXVal-format pairs (``data.rexval``), RaTE-Eval Tasks 1-3 (``data.rate_eval``, a folder
  or a Hub dataset id); data.synth's default SYNTHETIC sets are written first when the profile
  names ``data.synthetic`` and they are missing. :meth:`Evaluator.describe` says what the data
  are; a folder that data.synth made is called SYNTHETIC whatever the profile's label says.
- RaTEScore: through :func:`train.tune.precompute.precompute` (entities and embeddings cached on
  disk under ``<output>/cache``, keyed by the models' content), with the profile's NER run.
- Baselines: :func:`train.evaluation.baselines.score_baselines`; comparators (RadGraph F1, CheXbert,
  semb, RadCliQ-v1, GREEN, CIDEr, SPICE): :func:`train.evaluation.comparators.score`; ER²Score:
  :class:`radscore.ER2Score` on a run's export, in native units, with the time per pair.
- Agreement: :func:`train.evaluation.metaeval.agreement` (grouped bootstrap CIs) with the profile's settings.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from train.ablations.profile import Profile
from train.ablations.resources import ResourceUnavailable, RowUnavailable, check_model, fetch_dataset
from train.ablations.runs import RunManager, RunResult

SYNTHETIC_MARK = "manifest_synthetic.jsonl"  # data.synth writes it in every set folder


def is_synthetic(folder: Path) -> bool:
    folder = Path(folder)
    return (folder / SYNTHETIC_MARK).is_file() or (folder.parent / "SYNTHETIC_README.md").is_file()


class Evaluator:
    def __init__(self, profile: Profile, runs: RunManager, progress: bool = True):
        self.profile, self.runs, self.progress = profile, runs, progress
        self.cache_dir = Path(profile.output) / "cache"
        self._memo: dict = {}
        self._synthetic_checked = False

    def _once(self, key, make):
        if key not in self._memo:
            try:
                self._memo[key] = make()
            except RowUnavailable as err:
                self._memo[key] = err
        value = self._memo[key]
        if isinstance(value, RowUnavailable):
            raise value
        return value

    # ---- data ------------------------------------------------------------------------------------
    def _synthetic(self) -> None:
        if self.profile.data.synthetic and not self._synthetic_checked:
            from data.synth import generate_default

            self._synthetic_checked = True
            generate_default(self.profile.data.synthetic, progress=lambda m: print(m, flush=True))

    def rexval(self) -> list:
        def make():
            self._synthetic()
            path = self.profile.data.rexval
            if not path:
                raise ResourceUnavailable(
                    f"needs the ReXVal dataset (PhysioNet rexval-dataset 1.0.0, credentialed; it cannot be "
                    f"downloaded here): set data.rexval in {self.profile.source} to its folder")
            if not Path(path).is_dir():
                raise ResourceUnavailable(f"ReXVal folder {path!r} (data.rexval) not found")
            from data.rexval import read_rexval

            return read_rexval(path, significant_only=self.profile.data.rexval_significant_only)
        return self._once("rexval", make)

    def rate_eval_root(self) -> Path:
        def make():
            self._synthetic()
            source = self.profile.data.rate_eval
            if not source:
                raise ResourceUnavailable(f"needs RaTE-Eval: set data.rate_eval in {self.profile.source}")
            return fetch_dataset(source, "RaTE-Eval dataset")
        return self._once("rate_eval_root", make)

    def task(self, number: int) -> list:
        from data import rate_eval

        def make():
            root = self.rate_eval_root()
            if number == 3:
                return rate_eval.read_rate_eval_task3(root)
            reader = rate_eval.read_rate_eval_task1 if number == 1 else rate_eval.read_rate_eval_task2
            splits = self.profile.data.task1_splits if number == 1 else self.profile.data.task2_splits
            return [p for split in splits for p in reader(root, split)]
        return self._once(f"task{number}", make)

    def describe(self, kind: str) -> str:
        """The header line naming the data of ``kind`` (``rexval``, ``rate_eval``, ``ner``)."""
        label = self.profile.label(kind)
        folder = {"rexval": self.profile.data.rexval, "rate_eval": self.profile.data.rate_eval}.get(kind)
        if folder and Path(folder).exists() and is_synthetic(Path(folder)) and "SYNTHETIC" not in label.upper():
            label = f"SYNTHETIC sample (data.synth) — not the paper's benchmark (profile label: {label})"
        return f"{label}: {folder}" if folder else label

    # ---- metrics -----------------------------------------------------------------------------------
    def ner_export(self) -> str:
        spec = self.profile.ratescore.ner_run
        if spec is None:
            raise ResourceUnavailable(f"RaTEScore needs an NER run: set ratescore.ner_run in {self.profile.source}")
        return str(self.runs.ensure(spec).export)

    def ratescore(self, dataset: str, refs: list, cands: list, matrix: str, encoder: str | None = None,
                  pooling: str | None = None, trust_remote_code: bool = False) -> np.ndarray:
        rs = self.profile.ratescore
        encoder, pooling = encoder or rs.encoder, pooling or rs.pooling

        def make():
            from train.tune.precompute import ScorerSettings, precompute

            ner = self.ner_export()
            check_model(encoder, "entity encoder")
            settings = ScorerSettings(ner=ner, encoder=encoder, pooling=pooling, splitter=rs.splitter,
                                      penalty=rs.penalty, empty_score=rs.empty_score, batch_size=rs.batch_size,
                                      trust_remote_code=trust_remote_code)
            tables, _ = precompute(refs, cands, settings, self.cache_dir, self.progress)
            return tables
        tables = self._once(("ratescore", dataset, encoder, pooling), make)
        return tables.score_matrix(matrix)

    def baseline(self, name: str, dataset: str, refs: list, cands: list) -> np.ndarray:
        def make():
            from train.evaluation.baselines import score_baselines

            model = self.profile.baselines.bertscore_model
            if name == "bertscore":
                check_model(model, "BERTScore model")
            scores, unavailable = score_baselines(refs, cands, (name,), bertscore_model=model)
            if name in unavailable:
                reason = unavailable[name]
                raise RowUnavailable(reason if reason.startswith("skipped:") else f"unavailable: {reason}")
            return scores[name]
        return self._once(("baseline", name, dataset), make)

    def comparator(self, name: str, dataset: str, refs: list, cands: list) -> np.ndarray:
        """Scores of a comparator (:mod:`train.evaluation.comparators`), higher is better; a
        ``skipped: needs …`` row where its package or model is not here."""
        def make():
            from train.evaluation import comparators

            try:
                return comparators.score(name, refs, cands)
            except comparators.ComparatorSkipped as err:
                raise RowUnavailable(str(err)) from None
        return self._once(("comparator", name, dataset), make)

    def er2(self, run: RunResult, dataset: str, refs: list, cands: list) -> dict:
        """``{"subscores": (n, N) native, "total": (n,) native, "system", "seconds_per_pair"}``."""
        def make():
            from radscore import ER2Score

            base = json.loads((run.export / "reward_model.json").read_text()).get("base_model")
            if base:
                check_model(base, "ER²Score base model")
            scorer = ER2Score(run.export, batch_size=self.profile.er2.batch_size, dtype=self.profile.er2.dtype,
                              progress=self.progress)
            t0 = time.perf_counter()
            scores = scorer.score(cands, refs)
            seconds = (time.perf_counter() - t0) / max(1, len(refs))
            items = scorer.system.items
            return {"subscores": np.array([[s.subscores[i] for i in items] for s in scores], dtype=np.float64),
                    "total": np.array([s.total for s in scores], dtype=np.float64), "system": scorer.system,
                    "seconds_per_pair": seconds, "device": str(scorer.device)}
        return self._once(("er2", str(run.run_dir), dataset), make)

    def agreement(self, scores, ratings, groups, methods, sign: float = 1.0) -> dict:
        from train.evaluation.metaeval import agreement

        m = self.profile.metaeval
        return agreement(scores, ratings, groups, methods, int(m.bootstrap_resamples), float(m.confidence),
                         int(m.seed), sign)
