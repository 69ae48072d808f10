"""ER²Score training rows from an LLM (the paper used GPT-4; SPEC §3.2).

``python -m data generate-er2 --system radcliq|mrscore|FILE.yaml --references FILE --model NAME
[--base-url URL] [--out FILE]``

For every reference report and every quality tier of the scoring system (RadCliQ: 0-2, 3-4, 5-6
errors; MRScore: totals 0-40, 40-70, 70-100), the model is asked through the OpenAI-compatible
chat API (the ``openai`` package; ``--base-url`` points it at a local vLLM or llama.cpp server so
private reports never leave the site) to write a candidate report of that quality and to score
it. Each reply must be one JSON object ``{"candidate": str, "subscores": {item: number},
"total": number}`` that fits the reply schema (:func:`reply_schema`: every item present, nothing
else, each value in the item's range) and whose total follows the system's total rule; an
invalid reply is answered with the problem and asked again (``max_reasks`` times). API errors
(connection, timeout, rate limit, 5xx) are retried with exponential back-off.

Every reply is cached on disk under a hash of the request (``--cache``), and every accepted row is
appended to the output JSONL at once, so a killed run, started again, skips finished (reference,
tier) items and repeats no paid call. Rows are in the ER² format read by
:func:`data.ratings.read_er2_jsonl`, marked ``"generated_by"`` with the model name. Items that
still fail after every re-ask are listed in ``<out>.failed.jsonl`` and in the summary, and are
tried again on the next run.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from radscore.atomic import atomic_open, write_bytes_atomic, write_text_atomic
from data.textfile import numbered_lines
from data.ratings import RatingFormatError, group_of, read_jsonl
from radscore.systems import ScoringSystem, ScoringSystemError

SYSTEM_PROMPT = (
    "You create training data for a radiology report evaluation metric. Given a ground-truth "
    "radiology report, you write a candidate report for the same study that contains errors "
    "of the requested kinds and amount, and you score the candidate against the ground truth "
    "exactly by the given scoring system. You reply with one JSON object and nothing else."
)


class ReplyError(ValueError):
    """A reply that does not fit the reply schema or the system's total rule."""


def reply_schema(system: ScoringSystem) -> dict:
    """The JSON Schema of a reply (also sent as ``response_format`` with ``--structured-output``)."""
    props = {}
    for name, lo, hi in zip(system.items, system.lower_bounds, system.upper_bounds):
        if system.binary:
            props[name] = {"enum": [lo, hi]}
        else:
            props[name] = {"type": "integer" if system.integer else "number", "minimum": lo,
                           **({"maximum": hi} if hi is not None else {})}
    return {"type": "object", "additionalProperties": False, "required": ["candidate", "subscores", "total"],
            "properties": {"candidate": {"type": "string", "minLength": 1},
                           "subscores": {"type": "object", "additionalProperties": False,
                                         "required": list(system.items), "properties": props},
                           "total": {"type": "number"}}}


def parse_reply(text: str, system: ScoringSystem, tol: float = 1e-6) -> dict:
    """The reply as ``{"candidate", "subscores", "total"}``, or :class:`ReplyError` saying what is wrong."""
    body = text.strip() if isinstance(text, str) else ""
    if body.startswith("```"):  # a fenced block: take what is inside
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    try:
        reply = json.loads(body)
    except json.JSONDecodeError as err:
        raise ReplyError(f"the reply is not valid JSON ({err.msg} at character {err.pos})") from None
    if not isinstance(reply, dict):
        raise ReplyError("the reply must be a JSON object")
    keys = {"candidate", "subscores", "total"}
    if set(reply) != keys:
        raise ReplyError(f"the reply must have exactly the keys {sorted(keys)}; it has {sorted(reply)}")
    if not isinstance(reply["candidate"], str) or not reply["candidate"].strip():
        raise ReplyError("'candidate' must be a non-empty string")
    subs = reply["subscores"]
    if not isinstance(subs, dict):
        raise ReplyError("'subscores' must be an object")
    try:
        system.check_subscores(subs)
    except ScoringSystemError as err:
        raise ReplyError(str(err)) from None
    total = reply["total"]
    if isinstance(total, bool) or not isinstance(total, (int, float)):
        raise ReplyError(f"'total' must be a number, got {total!r}")
    expected = system.total(subs)
    if abs(total - expected) > tol:
        rule = "weighted sum" if system.total_rule == "weighted_sum" else "sum"
        raise ReplyError(f"'total' is {total:g} but the {rule} of the sub-scores is {expected:g}")
    return {"candidate": reply["candidate"].strip(),
            "subscores": {k: float(subs[k]) if not system.integer else int(subs[k]) for k in system.items},
            "total": float(expected)}


def tier_prompt(system: ScoringSystem, reference: str, tier: tuple[float, float]) -> str:
    lo, hi = tier
    lines = [f"Scoring system: {system.name} ({'higher' if system.higher_is_better else 'lower'} total is better).",
             "Sub-scores:"]
    for j, name in enumerate(system.items):
        desc = system.descriptions[j] if system.descriptions else name
        lo_j, hi_j = system.lower_bounds[j], system.upper_bounds[j]
        if system.binary:
            allowed = f"{hi_j:g} if correct, {lo_j:g} if it has an error"
        else:
            allowed = f"{'a whole number' if system.integer else 'a number'} >= {lo_j:g}" + \
                      (f" and <= {hi_j:g}" if hi_j is not None else "")
        lines.append(f"- {name}: {desc}; value: {allowed}")
    rule = "the sum of the sub-scores" if system.total_rule == "sum" else \
        "the sum of each sub-score times its weight (" + ", ".join(
            f"{n}: {w:g}" for n, w in zip(system.items, system.weights)) + ")"
    lines += [f"total = {rule}.", "",
              f"Write a candidate report for the study below whose total is between {lo:g} and {hi:g}, "
              "then score it. Keep the style of a real report; do not mention the errors.", "",
              "Ground-truth report:", reference, "",
              'Reply with only this JSON object: {"candidate": "<the report>", "subscores": {'
              + ", ".join(f'"{n}": <value>' for n in system.items) + '}, "total": <total>}']
    return "\n".join(lines)


def read_references(path: str | Path, field_name: str = "reference", id_field: str | None = "id") -> list[tuple[str, str]]:
    """``(reference id, text)`` pairs from a text file (one report a line) or JSON lines."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    out = []
    if path.suffix.lower() == ".jsonl":
        for lineno, rec in read_jsonl(path):
            text = rec.get(field_name)
            if not isinstance(text, str) or not text.strip():
                raise RatingFormatError(f"{path}:{lineno}: field {field_name!r} must be a non-empty string")
            rid = rec.get(id_field) if id_field else None
            out.append((str(rid) if rid is not None else group_of(text), text.strip()))
    else:
        for lineno, line in numbered_lines(path, RatingFormatError):  # one report per line (\n)
            if line.strip():
                out.append((group_of(line.strip()), line.strip()))
    if not out:
        raise RatingFormatError(f"{path}: no reference reports")
    ids = [r for r, _ in out]
    repeated = sorted({r for r in ids if ids.count(r) > 1})
    if repeated:
        raise RatingFormatError(f"{path}: reference ids repeat: {repeated[:5]} (identical reports or ids)")
    return out


def drop_partial_last_line(path: Path) -> None:
    """A run killed while writing leaves a last line without its newline: cut it (with a warning),
    its item is generated again (from the cache)."""
    raw = path.read_bytes()
    if raw and not raw.endswith(b"\n"):
        keep = raw[: raw.rfind(b"\n") + 1]
        print(f"{path}: dropping an unfinished last line ({len(raw) - len(keep)} bytes) left by a killed run",
              file=sys.stderr)
        write_bytes_atomic(path, keep)


class ReplyCache:
    """Replies on disk, one JSON file per request hash."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)

    @staticmethod
    def key(request: dict) -> str:
        return hashlib.sha256(json.dumps(request, sort_keys=True, ensure_ascii=False).encode()).hexdigest()

    def get(self, key: str) -> str | None:
        path = self.folder / key[:2] / f"{key}.json"
        return json.loads(path.read_text(encoding="utf-8"))["reply"] if path.is_file() else None

    def put(self, key: str, reply: str) -> None:
        path = self.folder / key[:2] / f"{key}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps({"reply": reply}, ensure_ascii=False))  # a kill never leaves half an entry


@dataclass
class GenerationSummary:
    items: int = 0
    already_done: int = 0
    written: int = 0
    failed: list = field(default_factory=list)
    api_calls: int = 0
    cache_hits: int = 0
    reasks: int = 0
    retries: int = 0

    def table(self) -> str:
        rows = [("items (reference x tier)", self.items), ("already in the output", self.already_done),
                ("rows written", self.written), ("failed after re-asks", len(self.failed)),
                ("API calls", self.api_calls), ("cache hits", self.cache_hits),
                ("re-asks", self.reasks), ("retried API errors", self.retries)]
        return "\n".join(f"{k:<26} {v}" for k, v in rows)


class ER2Generator:
    """Asks a chat model for candidates and scores; see the module doc."""

    def __init__(self, system: ScoringSystem, model: str, client=None, base_url: str | None = None,
                 api_key: str | None = None, cache_dir: str | Path | None = None, temperature: float = 0.7,
                 max_reasks: int = 2, max_retries: int = 5, backoff: float = 1.0, structured_output: bool = False,
                 timeout: float = 120.0):
        if not system.tiers:
            raise ValueError(f"scoring system {system.name!r} defines no quality tiers ('tiers' in its YAML)")
        self.system, self.model, self.temperature = system, model, temperature
        self.max_reasks, self.max_retries, self.backoff = max_reasks, max_retries, backoff
        self.structured_output = structured_output
        if client is None:
            from openai import OpenAI

            client = OpenAI(base_url=base_url, api_key=api_key or "EMPTY", max_retries=0, timeout=timeout)
        self.client, self.base_url = client, base_url
        self.cache = ReplyCache(cache_dir) if cache_dir else None
        self.summary = GenerationSummary()

    def _request(self, messages: list[dict]) -> dict:
        req = {"model": self.model, "messages": messages, "temperature": self.temperature}
        if self.structured_output:
            req["response_format"] = {"type": "json_schema", "json_schema": {
                "name": f"er2_{self.system.name}", "schema": reply_schema(self.system)}}
        return req

    def _call(self, request: dict) -> str:
        import openai

        key = ReplyCache.key(request)  # model name, messages and parameters (not the URL: a moved server keeps its cache)
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            self.summary.cache_hits += 1
            return hit
        transient = (openai.APIConnectionError, openai.APITimeoutError, openai.RateLimitError,
                     openai.InternalServerError)
        for attempt in range(self.max_retries + 1):
            try:
                self.summary.api_calls += 1
                response = self.client.chat.completions.create(**request)
                break
            except transient as err:
                if attempt == self.max_retries:
                    raise RuntimeError(f"API still failing after {self.max_retries} retries: {err}") from err
                self.summary.retries += 1
                time.sleep(self.backoff * 2 ** attempt * (1 + random.random() / 2))
        reply = response.choices[0].message.content or ""
        if self.cache is not None:
            self.cache.put(key, reply)
        return reply

    def generate_one(self, reference: str, tier: tuple[float, float]) -> dict:
        """A validated ``{"candidate", "subscores", "total"}``; :class:`ReplyError` after the re-asks."""
        messages = [{"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": tier_prompt(self.system, reference, tier)}]
        for ask in range(self.max_reasks + 1):
            reply = self._call(self._request(messages))
            try:
                return parse_reply(reply, self.system)
            except ReplyError as err:
                if ask == self.max_reasks:
                    raise ReplyError(f"{err} (after {self.max_reasks} re-asks)") from None
                self.summary.reasks += 1
                messages = messages + [{"role": "assistant", "content": reply},
                                       {"role": "user", "content": f"That reply is invalid: {err}. Reply again "
                                        "with only the corrected JSON object."}]
        raise AssertionError("unreachable")

    def run(self, references: list[tuple[str, str]], out: str | Path, progress: bool = True) -> GenerationSummary:
        """Generate every (reference, tier) item not yet in ``out``, appending rows as they come."""
        from tqdm.auto import tqdm

        out = Path(out)
        done = set()
        if out.is_file() and out.read_text(encoding="utf-8").strip():
            drop_partial_last_line(out)
            for _, rec in read_jsonl(out):
                done.add((rec.get("reference_id"), rec.get("tier_requested")))
        out.parent.mkdir(parents=True, exist_ok=True)
        failed_path = out.with_name(out.name + ".failed.jsonl")
        tiers = list(self.system.tiers)
        self.summary.items = len(references) * len(tiers)
        with out.open("a", encoding="utf-8") as fh, tqdm(total=self.summary.items, disable=not progress,
                                                        unit="item", desc="generate-er2") as bar:
            for ref_id, text in references:
                for lo, hi in tiers:
                    label = f"{lo:g}-{hi:g}"
                    bar.update(1)
                    if (ref_id, label) in done:
                        self.summary.already_done += 1
                        continue
                    try:
                        got = self.generate_one(text, (lo, hi))
                    except ReplyError as err:
                        self.summary.failed.append({"reference_id": ref_id, "tier_requested": label, "error": str(err)})
                        continue
                    tier = self.system.tier_of(got["total"])
                    row = {"id": f"{ref_id}:{label}", "reference_id": ref_id, "reference": text,
                           "candidate": got["candidate"], "system": self.system.name,
                           "subscores": got["subscores"], "total": got["total"],
                           "higher_is_better": self.system.higher_is_better, "tier_requested": label,
                           "tier": None if tier is None else "{:g}-{:g}".format(*tiers[tier]),
                           "generated_by": self.model}
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
                    fh.flush()
                    self.summary.written += 1
        with atomic_open(failed_path, "w", encoding="utf-8") as fh:
            for rec in self.summary.failed:
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
        if not self.summary.failed:
            failed_path.unlink()
        return self.summary


def main_generate(args) -> int:
    """``python -m data generate-er2`` (arguments from :mod:`data.cli`)."""
    import os

    from radscore.systems import load_system

    system = load_system(args.system)
    refs = read_references(args.references, args.field, args.id_field)
    out = Path(args.out or f"er2_{system.name}_{args.model.replace('/', '_')}.jsonl")
    gen = ER2Generator(system, args.model, base_url=args.base_url, api_key=os.environ.get(args.api_key_env),
                       cache_dir=args.cache or str(out.with_name(out.name + ".cache")),
                       temperature=args.temperature, max_reasks=args.max_reasks, max_retries=args.retries,
                       backoff=args.backoff, structured_output=args.structured_output)
    try:
        summary = gen.run(refs, out)
    except RuntimeError as err:  # the API kept failing: finished rows are in the output already
        print(f"error: {err}\nrows written so far are kept in {out}; run the same command again to resume",
              file=sys.stderr)
        print(gen.summary.table(), file=sys.stderr)
        return 2
    print(f"ER² rows ({system.name}, model {args.model}) appended to {out}")
    print(summary.table())
    if summary.failed:
        print(f"{len(summary.failed)} item(s) failed; listed in {out}.failed.jsonl; run again to retry them",
              file=sys.stderr)
        return 1
    return 0
