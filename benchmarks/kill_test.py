"""Kill test: run long jobs as child processes, SIGKILL them at seeded random points, resume them
(or rerun a job that has no resume), and check what the kills left.

    python -m benchmarks.kill_test [--kills 20] [--seed 0] [--jobs NAME ...] [--launcher subprocess|fork]
        [--threads 1] [--out benchmarks/results/kill_test.json] [--merge] [--no-spread] [--refusal-first]
        [--pairs 120] [--chunk-size 8] [--ner EXPORT --encoder MODEL] [--writer-iterations 40]
        [--fit-epochs 6] [--tune-trials 40]

Per job: one uninterrupted run (the reference: its time, outputs and persist timeline), then
episodes from a fresh folder, each 1-3 kills in a row (each at a uniform random time within the
reference run's duration, or of a shorter whole run since; a run that finishes first is not a
kill), then a run to the end. After every kill: no output under its final name unless it equals
the reference's (a final name only appears when a run completes), every meta file parses, and
each partial file's first ``bytes`` hold exactly its meta file's ``records`` records. After each
episode: the outputs equal the reference's byte for byte (scores included). Resumable jobs also
show that each resume starts at the records persisted when it was killed (nothing persisted is
scored again; what a kill loses is the chunk in flight) and that records are persisted one chunk
at a time (no step in the polled timelines exceeds a chunk). Once per job an input is changed
before a resume: the resume must be refused in one line naming the file.

Jobs whose work is not records files say what they persist (``progress``: the global step of
``last.ckpt``, a study's complete trials), what a resumed run's log says it resumed from
(``resumed_from``: never less than what the kill left), what a kill may leave (``check``) and how a
finished run is judged against the reference (``summary`` and ``compare``; with ``spread``, a second
uninterrupted run measures how far two runs differ, and a resumed run must lie within that;
``--no-spread`` skips it and asks for exact equality; ``--refusal-first`` puts the kill after
the first chunk and the refused resume first, so ``--kills 1`` makes it the only kill). Every kill
records the run time since the last persist (the work it lost).

Jobs come from the modules of :data:`JOB_MODULES`, each with ``JOBS``, ``add_arguments`` and
``setup``. ``benchmarks/scoring/kill_jobs.py`` (its options: ``--pairs`` to ``--writer-iterations``):
``radscore score --out`` to JSON lines and to CSV, ``radscore compare --out-dir``, and
``atomic-writers``, a child that rewrites an export manifest, an affinity matrix and a results JSON
(about 0.5 MB each) with radscore's writers in a loop (no resume: rerun); by default the model is a
tiny random NER export (what is tested is the files). ``benchmarks/training/kill_jobs.py``
(``--fit-epochs``, ``--tune-trials``): ``python -m train fit`` of NER, ER²Score and ClinicalBLEURT
with tiny random backbones (resumed with ``--ckpt_path last``; a changed config must be refused),
``tune-weights`` (resumed through its optuna study; a changed objective must be refused), and
``export`` and ``publish --dry-run`` of a finished NER run (rerun). ``--merge`` keeps the jobs of
the ``--out`` JSON this run does not run (each with its own run's facts), read at every write under a
lock, so runs of other jobs may write to one file at the same time and it ends holding every job.
``--launcher fork`` forks the jobs from this process instead of starting Python afresh (fast; the
pytest versions use it); ``subprocess`` runs the real command. A forked child gets a tqdm lock of its
own (:func:`fresh_tqdm_lock`). A run still going after :data:`HANG_S` seconds is killed and its job fails.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "benchmarks" / "results" / "kill_test.json"
JOB_MODULES = ("benchmarks.scoring.kill_jobs", "benchmarks.training.kill_jobs")  # a room's jobs: one module each


@dataclass
class Job:
    """A job to kill. ``command(work)``: ``(module, argv)`` of a fresh run in the folder ``work``
    (run as ``python -m module argv``; in fork mode ``module.main(argv)``); ``resume``: what to add
    to resume (None: rerun from scratch); ``outputs(work)``: the files compared with the reference;
    ``records(work)``: the resumable records files (their ``.partial`` and ``.meta.json``);
    ``check(work)``: problems with what a kill left (beyond the records files); ``change(work)``:
    alter an input, returning what the refusal must name and how to undo it. ``complete_only``:
    an output under its final name before the run completed is damage (False: ``check`` judges)."""

    name: str
    prepare: Callable[[Path], None]
    command: Callable[[Path], tuple[str, list[str]]]
    outputs: Callable[[Path], list[Path]]
    resume: list[str] | None = None
    records: Callable[[Path], list[Path]] = lambda work: []
    check: Callable[[Path], list[str]] = lambda work: []
    change: Callable[[Path], tuple[str, Callable[[], None]]] | None = None
    chunk: int | None = None
    complete_only: bool = True  # outputs take their final names only when the run completes
    warm: Callable[[], None] | None = None  # fork launcher: import and load once, before the first fork
    # jobs whose work is not records files (training): what is persisted, how a run is judged
    progress: Callable[[Path], dict[str, int]] | None = None  # units of work persisted (default: records)
    resumed_from: Callable[[str], int | None] | None = None  # a resumed run's log -> the units it resumed from
    summary: Callable[[Path], dict] | None = None  # the finished result (default: the outputs' bytes)
    compare: Callable[[dict, dict, dict | None], dict] | None = None  # (result, reference, spread) -> {"equal": ...}
    spread: Callable[[dict, dict], dict] | None = None  # two uninterrupted results -> their spread (a second run)
    notes: list = field(default_factory=list)  # what ``check`` saw that is not damage (e.g. a refusal)


# ---- launching and killing ------------------------------------------------------------------------
#: a child still running after this many seconds is hung: it is killed and the job fails, naming it
HANG_S = 1800.0


def fresh_tqdm_lock() -> None:
    """In a forked child: give tqdm a write lock of its own. tqdm's lock is a class attribute that another
    thread of the parent may hold at the fork (its monitor thread takes it every few seconds); that thread
    does not exist in the child, which would wait for it forever. The new lock is shared with no process
    either: tqdm's default one includes a multiprocessing lock, and a child killed while holding that would
    block every bar of the parent."""
    std = sys.modules.get("tqdm.std")
    if std is None:
        return
    lock = threading.RLock()
    pending = [std.tqdm]
    while pending:
        cls = pending.pop()
        if cls is std.tqdm or "_lock" in vars(cls):
            cls.set_lock(lock)
        pending += cls.__subclasses__()


class Child:
    """A job's process: a fresh Python (``subprocess``) or a fork of this one (``fork``)."""

    def __init__(self, module: str, argv: list[str], log: Path, launcher: str, threads: int):
        self.code = None
        env = {**os.environ, "OMP_NUM_THREADS": str(threads), "PYTHONPATH": str(ROOT)}
        if launcher == "subprocess":
            with open(log, "wb") as out:
                self.proc = subprocess.Popen([sys.executable, "-m", module, *argv], cwd=ROOT, env=env,
                                             stdout=out, stderr=subprocess.STDOUT)
            self.pid = self.proc.pid
            return
        self.proc = None
        self.pid = os.fork()
        if self.pid == 0:  # the child: run the job's main and leave without this process's clean-up
            code = 1
            try:
                fresh_tqdm_lock()
                fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                sys.stdout = open(1, "w", closefd=False)
                sys.stderr = open(2, "w", closefd=False)
                if "torch" in sys.modules:  # a forked OpenMP pool must not be used
                    sys.modules["torch"].set_num_threads(1)
                code = importlib.import_module(module).main(argv)
            except SystemExit as err:
                code = err.code if isinstance(err.code, int) else 1
            except BaseException:
                import traceback

                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code or 0)

    def poll(self) -> int | None:
        if self.code is None:
            if self.proc is not None:
                self.code = self.proc.poll()
            else:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
                if pid:
                    self.code = os.waitstatus_to_exitcode(status)
        return self.code

    def kill(self) -> int:
        os.kill(self.pid, signal.SIGKILL)
        if self.proc is not None:
            self.code = self.proc.wait()
        else:
            self.code = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        return self.code


def _meta(path: Path) -> dict | None:
    try:
        return json.loads(Path(f"{path}.meta.json").read_text())
    except (OSError, ValueError):
        return None


def persisted(job: Job, work: Path) -> dict[str, int]:
    """Records each records file of ``job`` holds in complete chunks (its meta file), or the units
    of work its ``progress`` finds persisted (training steps in ``last.ckpt``, complete trials)."""
    if job.progress is not None:
        return job.progress(work)
    return {p.name: (_meta(p) or {}).get("records", 0) for p in job.records(work)}


def attempt(job: Job, work: Path, resume: bool, kill_after: float | None, launcher: str, threads: int,
            log: Path) -> dict:
    """One run, killed after ``kill_after`` seconds unless it ends first (``-1``: as soon as a
    chunk is persisted); its persist timeline."""
    module, argv = job.command(work)
    if resume and job.resume is not None:
        argv = [*argv, *job.resume]
    log.write_bytes(b"")  # there even when a forked child is killed before it opens it
    start = time.monotonic()
    child = Child(module, argv, log, launcher, threads)
    timeline, last, killed = [], None, False
    while child.poll() is None:
        now = time.monotonic() - start
        state = persisted(job, work)
        if state != last:
            timeline.append([round(now, 3), state])
            last = state
        if kill_after is not None and (now >= kill_after >= 0 or (kill_after < 0 and any(state.values()))):
            child.kill()
            killed = True
            break
        if now > HANG_S:
            child.kill()
            raise RuntimeError(f"{job.name}: the run did not end within {HANG_S:.0f} s (hung); the end of its log:\n"
                               f"{log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.02)
    seconds = time.monotonic() - start
    text = log.read_text(errors="replace")
    since = round(seconds - timeline[-1][0], 3) if timeline else None  # run time after the last persist
    return {"killed": killed, "code": child.code, "seconds": round(seconds, 3), "timeline": timeline,
            "persisted": persisted(job, work), "seconds_since_persist": since, "log": text[-2000:],
            "resumed_from": job.resumed_from(text) if resume and job.resumed_from is not None else None}


# ---- what a kill left -----------------------------------------------------------------------------
def damage(job: Job, work: Path, reference: dict[str, bytes]) -> list[str]:
    """Corrupted or half-written outputs under a final name, unreadable meta files, partial files
    whose complete chunks do not parse."""
    bad = []
    for path in job.outputs(work):
        if job.complete_only and path.exists() and path.read_bytes() != reference[path.name]:
            bad.append(f"{path.name}: under its final name but not the finished output")
    for path in job.records(work):
        meta_file = Path(f"{path}.meta.json")
        if not meta_file.exists():
            continue
        meta = _meta(path)
        if meta is None:
            bad.append(f"{meta_file.name}: not valid JSON")
            continue
        partial = Path(f"{path}.partial")
        if meta.get("complete") is False and partial.exists():
            data = partial.read_bytes()[:meta["bytes"]]
            try:
                text = data.decode("utf-8")
                if path.suffix == ".csv":
                    import csv
                    import io

                    rows = list(csv.DictReader(io.StringIO(text, newline="")))
                else:
                    rows = [json.loads(line) for line in text.splitlines()]
                if len(data) != meta["bytes"] or len(rows) != meta["records"]:
                    bad.append(f"{partial.name}: {len(rows)} records in {len(data)} bytes, meta says "
                               f"{meta['records']} in {meta['bytes']}")
            except ValueError as err:
                bad.append(f"{partial.name}: its complete chunks do not parse ({err})")
    return bad + job.check(work)


def snapshot(paths: list[Path]) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in paths if p.exists()}


def run_job(job: Job, kills: int, rng: random.Random, root: Path, launcher: str, threads: int,
            measure_spread: bool = True, refusal_first: bool = False) -> dict:
    """The reference run, then episodes of kills until ``kills`` kills (module doc); with
    ``refusal_first`` the targeted kill and the refusal come first (and count as a kill)."""
    if launcher == "fork" and job.warm is not None:
        job.warm()
    ref = root / job.name / "reference"
    ref.mkdir(parents=True)
    job.prepare(ref)
    first = attempt(job, ref, False, None, launcher, threads, ref / "log.txt")
    if first["code"] != 0:
        raise RuntimeError(f"{job.name}: the uninterrupted run failed ({first['code']}):\n{first['log']}")
    reference = snapshot(job.outputs(ref))
    total = first["seconds"]
    out = {"command": [job.command(ref)[0], *job.command(ref)[1]], "resume": job.resume, "chunk": job.chunk,
           "uninterrupted_seconds": total, "kills": 0, "finished_before_kill": 0, "corrupted_outputs": 0,
           "episodes": [], "problems": []}
    ref_summary = spread = None
    if job.summary is not None:
        ref_summary = out["reference"] = job.summary(ref)
    if job.spread is not None and measure_spread:  # a second uninterrupted run: how far two runs differ
        ref2 = root / job.name / "reference2"
        ref2.mkdir()
        job.prepare(ref2)
        second = attempt(job, ref2, False, None, launcher, threads, ref2 / "log.txt")
        if second["code"] != 0:
            raise RuntimeError(f"{job.name}: the second uninterrupted run failed ({second['code']}):\n{second['log']}")
        spread = out["spread"] = job.spread(ref_summary, job.summary(ref2))
        out["uninterrupted_seconds_second"] = second["seconds"]
    refused = job.change is None
    while out["kills"] < kills or not refused:
        work = root / job.name / f"episode{len(out['episodes'])}"
        work.mkdir()
        job.prepare(work)
        episode = {"kills": [], "resumed": True}
        planned = 0 if refusal_first and not refused else min(rng.randint(1, 3), kills - out["kills"])
        for k in range(max(1, planned)):
            at = rng.uniform(0.05, 1.0) * total if planned else -1  # kills done: one after a chunk, to refuse
            run = attempt(job, work, k > 0, at, launcher, threads, work / f"log{k}.txt")
            if not run["killed"]:
                out["finished_before_kill"] += 1
                if k == 0:  # a whole run took this long: later kills are drawn within it
                    total = min(total, run["seconds"])
                break
            bad = damage(job, work, reference)
            out["kills"] += 1
            out["corrupted_outputs"] += len(bad)
            out["problems"] += [f"episode {len(out['episodes'])} kill {k}: {b}" for b in bad]
            steps = [max(0, b - a) for (_, s0), (_, s1) in zip(run["timeline"], run["timeline"][1:])
                     for a, b in zip(s0.values(), s1.values())]
            episode["kills"].append({"at_seconds": round(at, 3), "persisted": run["persisted"],
                                     "largest_persist_step": max(steps, default=0), "damage": bad,
                                     "seconds_since_persist": run["seconds_since_persist"],
                                     **({"resumed_from": run["resumed_from"]} if k > 0 else {})})
        if not refused and episode["kills"] and any(episode["kills"][-1]["persisted"].values()):
            episode["refusal"] = refusal(job, work, launcher, threads)
            refused = True
        elif not refused and not planned:  # the targeted kill found no chunk persisted
            episode["refusal"] = {"ok": False, "message": "no chunk was persisted before the run ended"}
            refused = True
        final = attempt(job, work, bool(episode["kills"]), None, launcher, threads, work / "log_final.txt")
        episode["final_code"] = final["code"]
        if job.compare is not None:
            episode["comparison"] = job.compare(job.summary(work), ref_summary, spread) if final["code"] == 0 else None
            episode["equal_to_uninterrupted"] = bool(episode["comparison"] and episode["comparison"]["equal"])
        else:
            episode["equal_to_uninterrupted"] = final["code"] == 0 and snapshot(job.outputs(work)) == reference
        if job.resumed_from is not None and episode["kills"]:
            episode["final_resumed_from"] = final["resumed_from"]
            out["problems"] += resume_problems(len(out["episodes"]), episode)
        episode["resumed_from"] = {p.name: (_meta(p) or {}).get("resumed_from") for p in job.records(work)}
        if job.resume is not None and episode["kills"]:
            for path in job.records(work):  # every persisted count short of the end is resumed from
                name, starts, n = path.name, episode["resumed_from"][path.name], (_meta(path) or {}).get("n")
                wanted = [kill["persisted"][name] for kill in episode["kills"]]
                if {s for s in starts or [] if s and s != n} != {w for w in wanted if w and w != n}:
                    out["problems"].append(f"{name}: resumed from {starts}, persisted at the kills {wanted}")
        if not episode["equal_to_uninterrupted"]:
            out["problems"].append(f"episode {len(out['episodes'])}: outputs differ from the uninterrupted run "
                                   f"(code {final['code']}): {final['log'][-300:]}")
        out["episodes"].append(episode)
    eps = out["episodes"]
    out["equal_to_uninterrupted"] = f"{sum(e['equal_to_uninterrupted'] for e in eps)}/{len(eps)}"
    out["largest_persist_step"] = max((k["largest_persist_step"] for e in eps for k in e["kills"]), default=0)
    out["refusal"] = next((e["refusal"] for e in eps if "refusal" in e), None)
    since = [k["seconds_since_persist"] for e in eps for k in e["kills"] if k["seconds_since_persist"] is not None]
    out["largest_seconds_since_persist"] = max(since, default=None)
    if job.notes:
        out["notes"] = sorted(set(job.notes))
    return out


def resume_problems(number: int, episode: dict) -> list[str]:
    """Each resume of a job with ``resumed_from`` starts at what the kill before it left or later
    (nothing persisted is done again). A resumed run killed before it said where it resumes says
    nothing (its successor then resumes from what is still on disk); the run to the end must say."""
    bad, kills = [], episode["kills"]
    starts = [(kill.get("resumed_from"), True) for kill in kills[1:]] + [(episode.get("final_resumed_from"), False)]
    kept = 0
    for kill, (start, killed) in zip(kills, starts):
        kept = max(kept, max(kill["persisted"].values(), default=0))
        if start is None and killed:
            continue  # killed before it resumed: what it would resume from is still on disk
        if kept and (start is None or start < kept):
            bad.append(f"episode {number}: {kept} units persisted at a kill, the resume started from {start}")
    return bad


def refusal(job: Job, work: Path, launcher: str, threads: int) -> dict:
    """Resume after changing an input: refused, in one line naming the file, and nothing written."""
    names, undo = job.change(work)
    kept = (".partial", ".meta.json", ".ckpt", ".db")
    before = {p.name: p.read_bytes() for p in work.rglob("*") if p.name.endswith(kept)}
    run = attempt(job, work, True, None, launcher, threads, work / "log_refused.txt")
    undo()
    errors = [line for line in run["log"].splitlines() if "error:" in line.lower()]  # "<prog>: error: ..."
    after = {p.name: p.read_bytes() for p in work.rglob("*") if p.name.endswith(kept)}
    message = errors[-1] if errors else ""
    return {"code": run["code"], "message": message, "one_line": len(errors) == 1,
            "names_the_file": names in message, "left_files_alone": before == after,
            "ok": run["code"] == 2 and len(errors) == 1 and names in message and before == after}


# ---- machine ----------------------------------------------------------------------------------------
def job_modules() -> dict[str, object]:
    """The modules of :data:`JOB_MODULES`, each with ``JOBS`` (name -> builder(setup) -> Job),
    ``add_arguments(parser)`` and ``setup(root, args) -> dict`` (``setup["record"]`` goes to the JSON)."""
    return {name: importlib.import_module(name) for name in JOB_MODULES}


def main(argv: list[str] | None = None) -> int:
    modules = job_modules()
    jobs = {job: module for module in modules.values() for job in module.JOBS}
    p = argparse.ArgumentParser(prog="python -m benchmarks.kill_test", description=__doc__.split("\n\n")[0])
    p.add_argument("--kills", type=int, default=20, help="kills per job")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", nargs="+", default=list(jobs), choices=list(jobs))
    p.add_argument("--launcher", choices=["subprocess", "fork"], default="subprocess")
    p.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS of the jobs")
    p.add_argument("--work", help="work folder (default: a temporary one)")
    p.add_argument("--out", default=str(RESULT))
    p.add_argument("--no-spread", action="store_true",
                   help="no second uninterrupted run: results must equal the reference exactly (fast)")
    p.add_argument("--refusal-first", action="store_true",
                   help="the kill after the first chunk and the refused resume first (with --kills 1: the only kill)")
    p.add_argument("--merge", action="store_true",
                   help="keep the jobs of the --out JSON that this run does not run (each keeps its own run's facts)")
    for module in modules.values():
        module.add_arguments(p)
    args = p.parse_args(argv)
    return run(args, jobs)


def run(args, jobs: dict) -> int:
    """Run the jobs; the JSON is rewritten after each job (``"complete": false`` until the last)."""
    import tempfile

    from radscore.environment import environment

    result = {"kills_per_job": args.kills, "seed": args.seed, "launcher": args.launcher, "threads": args.threads,
              "environment": environment(seed=args.seed, threads=args.threads),
              "load_average_1min": os.getloadavg()[0], "setup": {}, "jobs": {}}
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        root, setups = Path(tmp), {}
        ok = True
        for k, name in enumerate(args.jobs):
            module = jobs[name]
            if module.__name__ not in setups:
                setups[module.__name__] = module.setup(root / module.__name__, args)
                result["setup"][module.__name__] = setups[module.__name__]["record"]
            job = module.JOBS[name](setups[module.__name__])
            started = time.monotonic()
            j = result["jobs"][name] = run_job(job, args.kills, rng, root, args.launcher, args.threads,
                                               not getattr(args, "no_spread", False),
                                               getattr(args, "refusal_first", False))
            j["wall_seconds"] = round(time.monotonic() - started, 1)
            print(f"{name}: {j['kills']} kills, {j['corrupted_outputs']} corrupted outputs, equal "
                  f"{j['equal_to_uninterrupted']}, refusal {'ok' if (j['refusal'] or {}).get('ok') else j['refusal']}, "
                  f"{len(j['problems'])} problems", file=sys.stderr)
            ok = write(args, json.loads(json.dumps(result).replace(str(root), "WORK")),
                       args.jobs[k + 1:])  # the temporary folder's name replaced
    return 0 if ok else 1


#: what a merged job keeps of the run that measured it
RUN_FACTS = ("kills_per_job", "seed", "launcher", "threads", "environment", "load_average_1min")


def write(args, result: dict, remaining: list[str]) -> bool:
    """Write ``--out``; whether every job passed. With ``--merge`` the jobs this run does not run are
    kept from the file as it stands at this write (under a lock, so runs of other jobs may write to the
    same file at the same time), each with the facts of the run it comes from."""
    import hashlib
    import tempfile

    from filelock import FileLock

    from benchmarks.results_file import write_result

    def passed(jobs: dict) -> bool:
        return all(not j["problems"] and (j["refusal"] is None or j["refusal"]["ok"]) for j in jobs.values())

    if not args.out:
        return passed(result["jobs"])
    key = hashlib.sha256(str(Path(args.out).resolve()).encode()).hexdigest()[:16]
    lock = Path(tempfile.gettempdir()) / f"kill_test-{key}.lock"  # not beside the results
    with FileLock(str(lock)):
        merge = getattr(args, "merge", False) and Path(args.out).is_file()
        old = json.loads(Path(args.out).read_text()) if merge else {}
        if old:
            kept = {name: job for name, job in old.get("jobs", {}).items() if name not in result["jobs"]}
            for job in kept.values():
                job.setdefault("run", {k: old[k] for k in (*RUN_FACTS, "machine") if old.get(k) is not None})
            ours = {name: {**job, "run": {k: result.get(k) for k in RUN_FACTS}} for name, job in result["jobs"].items()}
            result = {**result, "jobs": {**kept, **ours}, "setup": {**old.get("setup", {}), **result["setup"]}}
            remaining = [*remaining, *old.get("still_to_run", [])]
            remaining = [name for name in dict.fromkeys(remaining) if name not in result["jobs"]]
        ok = result["ok"] = passed(result["jobs"])
        complete = result["complete"] = not remaining
        result.pop("still_to_run", None)
        if remaining:
            result["still_to_run"] = list(remaining)
        write_result(args.out, result, indent=1)
    print(f"wrote {args.out}{'' if complete else ' (not complete: more jobs to run)'}", file=sys.stderr)
    return ok


if __name__ == "__main__":
    sys.exit(main())
