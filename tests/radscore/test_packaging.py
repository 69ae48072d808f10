"""`pip install radscore` (no extras) installs everything radscore imports, or the import names the
extra to install; ER2Score without peft says `pip install 'radscore[er2]'`."""

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

from radscore.optional import EXTRAS

ROOT = Path(__file__).resolve().parents[2]
# medspacy cannot live in radscore's environment (it needs numpy<2): splitter="pyrush" explains that.
OUTSIDE = {"medspacy"}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].strip().lower().replace("_", "-")


def _third_party_imports() -> set[str]:
    found = set()
    for path in (ROOT / "radscore").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
                     else [])
            for name in names:
                top = name.split(".")[0]
                if top != "radscore" and top not in sys.stdlib_module_names:
                    found.add(top)
    return found


def test_every_module_radscore_imports_is_a_dependency_or_a_named_extra():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    base = {_name(r) for r in project["dependencies"]}
    extras = {k: {_name(r) for r in v} for k, v in project["optional-dependencies"].items()}
    dists = packages_distributions()
    missing = []
    for module in sorted(_third_party_imports() - OUTSIDE):
        dist = {d.lower().replace("_", "-") for d in dists.get(module, [module])}
        if dist & base:
            continue
        extra = EXTRAS.get(module, (None,))[0]
        if extra is None or not dist & extras.get(extra, set()):
            missing.append(f"{module} (distribution {sorted(dist)}): neither a dependency nor in a declared extra")
    assert not missing, "\n".join(missing)
    assert "peft" in extras["er2"] and "pyyaml" in base


def test_er2score_without_peft_names_the_extra(tiny_backbone, tmp_path, monkeypatch):
    from radscore.systems import RADCLIQ
    from train.rehearsal.tiny import build_tiny_reward_export

    build_tiny_reward_export(tmp_path / "er2", tiny_backbone, RADCLIQ)
    monkeypatch.setitem(sys.modules, "peft", None)  # as if peft were not installed
    import radscore

    with pytest.raises(ImportError, match=r"pip install 'radscore\[er2\]'"):
        radscore.ER2Score(tmp_path / "er2", progress=False)
