"""The project's import graph is one-way (no circles, function-level imports included) and no
module reaches into another package's private names."""

import ast
import graphlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("radscore", "train", "data", "benchmarks")


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = path
    return out


def _imports(path: Path, name: str, modules: dict) -> list[tuple[str, list[str]]]:
    """(imported module, imported names) for every import statement, at any depth."""
    is_pkg = path.name == "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_pkg else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.append((sub, []) if sub in modules else (base, [alias.name]))
    return [(m, n) for m, n in found if m in modules]


def test_no_import_circles():
    modules = _modules()
    graph = {name: {m for m, _ in _imports(path, name, modules) if m != name} for name, path in modules.items()}
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        raise AssertionError(f"import circle: {' -> '.join(exc.args[1])}") from None


def test_no_private_names_imported_across_packages():
    modules = _modules()
    bad = []
    for name, path in modules.items():
        for target, names in _imports(path, name, modules):
            same_package = target.rsplit(".", 1)[0] == name.rsplit(".", 1)[0] or target.startswith(name + ".")
            for imported in names:
                if imported.startswith("_") and not imported.startswith("__") and not same_package:
                    bad.append(f"{name} imports {target}.{imported}")
    assert not bad, "private names used outside their package:\n" + "\n".join(bad)


def _arrows() -> list[tuple[str, str]]:
    """(importing module, imported module) for every import between the project's modules."""
    modules = _modules()
    return [(name, target) for name, path in modules.items() for target, _ in _imports(path, name, modules)]


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_radscore_imports_neither_data_nor_train():
    bad = [f"{a} imports {b}" for a, b in _arrows() if _in(a, "radscore") and (_in(b, "data") or _in(b, "train"))]
    assert not bad, "radscore is the library; data and train build on it, never the reverse:\n" + "\n".join(bad)


def test_data_never_imports_train():
    bad = [f"{a} imports {b}" for a, b in _arrows() if _in(a, "data") and _in(b, "train")]
    assert not bad, "data (readers, generator) does not depend on training:\n" + "\n".join(bad)


TASK_FOLDERS = ("train.ner", "train.reward", "train.bleurt", "train.tune")


def test_no_task_imports_another_task():
    bad = [f"{a} imports {b}" for a, b in _arrows() for task in TASK_FOLDERS for other in TASK_FOLDERS
           if other != task and _in(a, task) and _in(b, other)]
    assert not bad, ("a task folder imports another task; shared code belongs in train/lightning, "
                     "train/release or train/evaluation:\n" + "\n".join(bad))
