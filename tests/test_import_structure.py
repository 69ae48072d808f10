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


DATA_MODULES = ("train.ner.data", "train.reward.data", "train.bleurt.data")


def test_data_modules_only_load_data():
    """A training task's data module reads, splits and batches its rows; what is measured beside the
    model after a test (baselines, the shallow learner, per-row predictions) is the callbacks' work."""
    arrows = _arrows()
    assert {a for a, _ in arrows} >= set(DATA_MODULES)
    bad = [f"{a} imports {b}" for a, b in arrows if a in DATA_MODULES
           and (_in(b, "train.evaluation") or _in(b, "train.callbacks") or _in(b, "benchmarks"))]
    assert not bad, "a data module imports evaluation code:\n" + "\n".join(bad)


TASK_FOLDERS = ("train.ner", "train.reward", "train.bleurt", "train.tune")


def test_no_task_imports_another_task():
    bad = [f"{a} imports {b}" for a, b in _arrows() for task in TASK_FOLDERS for other in TASK_FOLDERS
           if other != task and _in(a, task) and _in(b, other)]
    assert not bad, ("a task folder imports another task; shared code belongs in train/lightning, "
                     "train/release or train/evaluation:\n" + "\n".join(bad))


# train/'s rooms from the bottom up: a module imports its own room and the rooms of lower layers only.
# Rooms in one layer do not import each other. evaluation is metric code; callbacks.py holds what follows
# a test (baselines beside the model, the export), which the training configs name. __main__ dispatches
# the commands (it imports the training CLI; the other commands' modules are loaded by name when run), so
# the rehearsal can run any command as ``python -m train`` does.
TRAIN_LAYERS = (
    ("evaluation",),
    ("lightning",),
    ("__main__",),
    ("release",),
    ("callbacks",),
    ("ner", "reward", "bleurt", "tune"),
    ("ablations",),
    ("rehearsal",),
    ("demo",),
)


def _room(module: str) -> str | None:
    """The room of a train module (``train.lightning.memory`` -> ``lightning``); None for the package."""
    parts = module.split(".")
    return parts[1] if parts[0] == "train" and len(parts) > 1 else None


def upward_imports(arrows, layers=TRAIN_LAYERS) -> list[str]:
    """Every arrow between train's rooms that does not run down the layering, and every room the
    layering does not place."""
    level = {room: i for i, layer in enumerate(layers) for room in layer}
    bad = []
    for a, b in arrows:
        ra, rb = _room(a) if _in(a, "train") else None, _room(b) if _in(b, "train") else None
        if ra is None or rb is None or ra == rb:
            continue
        for room, module in ((ra, a), (rb, b)):
            if room not in level:
                bad.append(f"{module}: room train/{room} is not in TRAIN_LAYERS")
        if ra in level and rb in level and level[rb] >= level[ra]:
            way = "up" if level[rb] > level[ra] else "across"
            bad.append(f"{a} imports {b}: {ra} -> {rb} runs {way} the layering")
    return sorted(set(bad))


def test_every_train_room_has_its_place_in_the_layering():
    placed = {room for layer in TRAIN_LAYERS for room in layer}
    rooms = {_room(name) for name in _modules() if _in(name, "train")} - {None}
    assert rooms == placed, f"rooms not placed: {sorted(rooms - placed)}; placed but gone: {sorted(placed - rooms)}"


def test_no_upward_import_in_train():
    bad = upward_imports(_arrows())
    assert not bad, "train/ imports up its layering (TRAIN_LAYERS):\n" + "\n".join(bad)


def test_the_layering_check_fails_on_an_upward_import(tmp_path):
    """SYNTHETIC module sources, read by the same parser as the project's modules: the import that
    ran up before the published dimensions moved to train/lightning/architectures.py (a function-level
    import from the shared machinery into the rehearsal), one across a layer and one into an unplaced
    room, each added to the real arrows."""
    modules = _modules()
    up = tmp_path / "memory_probe.py"
    up.write_text("def config_facts(path):\n    from train.rehearsal.standins import BLEURT, REAL\n    return REAL, BLEURT\n")
    arrows = sorted({("train.lightning.memory_probe", m) for m, _ in _imports(up, "train.lightning.memory_probe", modules)})
    assert arrows == [("train.lightning.memory_probe", "train.rehearsal.standins")]
    assert upward_imports(_arrows() + arrows) == [
        "train.lightning.memory_probe imports train.rehearsal.standins: lightning -> rehearsal runs up the layering"]

    across = tmp_path / "cli.py"
    across.write_text("from ..bleurt.convert import load_regressor\n")
    arrows = sorted({("train.tune.cli", m) for m, _ in _imports(across, "train.tune.cli", modules)})
    assert upward_imports(arrows) == ["train.tune.cli imports train.bleurt.convert: tune -> bleurt runs across "
                                      "the layering"]

    assert upward_imports([("train.lightning.module", "train.newroom.thing")]) == [
        "train.newroom.thing: room train/newroom is not in TRAIN_LAYERS"]
    assert upward_imports([("train.demo", "train.lightning.module"), ("train.rehearsal.rehearse", "train.callbacks")]) == []
