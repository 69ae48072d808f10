"""Every JSON a module of ``benchmarks/`` or ``train/`` writes carries the environment record, or is on
:data:`NOT_RESULTS` with the reason it is no result.

Read with ``ast``, not run. A JSON write is a call of ``json.dump``, of ``write_json_atomic``, or of a
text or bytes writer (``write_text``, ``write_text_atomic``, ``write``, ``write_bytes``, ``writelines``)
given a ``json.dumps(...)``. The function that makes one (the module, outside functions) passes when it
also calls ``write_result`` of ``benchmarks.results_file`` or ``environment`` of ``radscore.environment``;
the lab's scripts call ``write_result``, which is itself no JSON write of theirs. Every JSON write counts,
not only those whose path names ``benchmarks/results``: a results path is mostly an argument (``--out``),
so a writer is either recorded or named below. An entry that no longer matches a write fails too, so the
list stays the list of what is left out.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEXT_WRITERS = {"write_text", "write_text_atomic", "write", "write_bytes", "write_bytes_atomic", "writelines"}
RECORDERS = {"write_result", "environment"}

#: "module path:function" -> why its JSON is no result (or why it is left as it is)
NOT_RESULTS = {
    "benchmarks/scoring/kill_jobs.py:make_inputs": "the kill test's input files (JSON lines of pairs)",
    "benchmarks/scoring/kill_jobs.py:_change.change": "the kill test's changed input, to check a resume is refused",
    "benchmarks/scoring/kill_jobs.py:atomic_writer_child": "a kill-test job's own output, killed while it writes",
    "benchmarks/scoring/bench_ratescore.py:_ours_child": "the child process's scores, read back by the benchmark",
    "benchmarks/scoring/bench_ratescore.py:run_ours": "the job file a child process reads",
    "benchmarks/scoring/bench_splitter.py:run_released_splitter": "the job file of the released splitter's process",
    "benchmarks/scoring/released_package.py:run_released": "the job file of the released scorer's process",
    "benchmarks/scoring/ratescore_driver.py:main": "the released scorer's protocol output, read by the benchmark",
    "benchmarks/scoring/rush_driver.py:main": "the released splitter's protocol output, read by the benchmark",
    "train/lightning/run_folder.py:RunFolder.record_environment": "it writes the environment records themselves",
    "train/callbacks.py:_write_lines": "per-row test predictions (JSON lines)",
    "train/callbacks.py:Export.on_test_end": "a run folder's test_metrics.json (its environment.json lies beside it)",
    "train/release/base.py:finish_export": "an export's metrics.json: model facts shipped with the weights",
    "train/release/bundle.py:write_bundle": "a bundle's metrics.json: model facts shipped with the weights",
    "train/rehearsal/comparators.py:build_radgraph_standin": "a stand-in model's config.json",
    "train/rehearsal/standins.py:build_bleurt": "a stand-in model's config files",
    "train/rehearsal/standins.py:build_custom_code": "a stand-in model's config.json",
    "train/rehearsal/standins.py:build_model": "a stand-in model's config.json",
}


def _name(func: ast.expr) -> str | None:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _is_dumps(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and _name(node.func) == "dumps" and isinstance(node.func, ast.Attribute) \
        and isinstance(node.func.value, ast.Name) and node.func.value.id == "json"


def is_json_write(call: ast.Call) -> bool:
    name = _name(call.func)
    if name == "dump" and isinstance(call.func, ast.Attribute) and getattr(call.func.value, "id", None) == "json":
        return True
    if name == "write_json_atomic":
        return True
    return name in TEXT_WRITERS and any(_is_dumps(n) for a in [*call.args, *(k.value for k in call.keywords)]
                                        for n in ast.walk(a))


def json_writers(tree: ast.Module) -> dict[str, bool]:
    """``{"function" (Class.method, or "<module>"): records}`` of every scope with a JSON write of its own."""
    out: dict[str, bool] = {}

    def visit(node: ast.AST, scope: str, calls: list[ast.Call]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = child.name if scope == "<module>" else f"{scope}.{child.name}"
                inner: list[ast.Call] = []
                visit(child, name, inner)
                if not isinstance(child, ast.ClassDef) and any(is_json_write(c) for c in inner):
                    out[name] = any(_name(c.func) in RECORDERS for c in inner)
            else:
                if isinstance(child, ast.Call):
                    calls.append(child)
                visit(child, scope, calls)

    top: list[ast.Call] = []
    visit(tree, "<module>", top)
    if any(is_json_write(c) for c in top):
        out["<module>"] = any(_name(c.func) in RECORDERS for c in top)
    return out


def all_writers() -> dict[str, bool]:
    found = {}
    for folder in ("benchmarks", "train"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for scope, records in json_writers(ast.parse(path.read_text(encoding="utf-8"))).items():
                found[f"{rel}:{scope}"] = records
    return found


def test_every_json_writer_records_the_environment_or_says_why_not():
    found = all_writers()
    bare = sorted(k for k, records in found.items() if not records and k not in NOT_RESULTS)
    assert not bare, ("these write JSON without the environment record: route a results file through write_result "
                      "of benchmarks.results_file (product code: environment(...) of radscore.environment), or add "
                      "the writer to NOT_RESULTS with the reason it is no result:\n" + "\n".join(bare))


def test_the_allow_list_names_only_writers_that_exist_and_lack_the_record():
    found = all_writers()
    stale = sorted(k for k in NOT_RESULTS if found.get(k, True))
    assert not stale, f"NOT_RESULTS entries that no longer write JSON without the record (remove them): {stale}"
    assert all(reason.strip() for reason in NOT_RESULTS.values())


def test_the_check_sees_the_ways_a_results_file_is_written():
    src = '''
import json
def a(out, r):
    write_text_atomic(out, json.dumps(r, indent=1) + "\\n")
def b(out, r):
    Path(out).write_text(json.dumps(r))
def c(out, r):
    with open(out, "w") as f:
        json.dump(r, f)
def d(out, r):
    write_json_atomic(out, r)
def e(out, r):
    write_result(out, r, indent=1)
def f(out, r):
    r["environment"] = environment(precision="fp32")
    write_text_atomic(out, json.dumps(r))
def g(out, text):
    write_text_atomic(out, text)
'''
    assert json_writers(ast.parse(src)) == {"a": False, "b": False, "c": False, "d": False, "f": True}
