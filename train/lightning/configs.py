"""Config files as overlays on a base: a top-level ``base:`` key names another config file (a path
relative to the overlay's folder), resolved recursively; the overlay says only what differs.

Merging is deep for mappings (key by key) and replaces everything else (lists, scalars), which is
what jsonargparse does when LightningCLI composes several ``--config`` files in order. So a
training run does not merge here: :func:`expand_config_args` turns each ``--config X`` of a command
line into ``--config BASE … --config X`` (base first), and LightningCLI composes them
(:class:`train.lightning.cli.RadscoreCLI`). Everything else that reads a config file (the tune
loader, the rehearsal, the ablation runner, tests) reads it with :func:`load_config`.
"""

from __future__ import annotations

import re
from pathlib import Path

BASE_KEY = "base"


class ConfigError(ValueError):
    """A config file, or its chain of bases, that cannot be read."""


def _read(path: Path) -> dict:
    import yaml

    if not path.is_file():
        raise ConfigError(f"{path}: config file not found")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML ({err})") from None
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    return raw


def _base_line(path: Path) -> int | None:
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if re.match(rf"^{BASE_KEY}\s*:", line):
            return n
    return None


def base_of(path: str | Path) -> Path | None:
    """The file a config's ``base:`` names (relative to the config's folder), or None."""
    path = Path(path)
    base = _read(path).get(BASE_KEY)
    if base is None:
        return None
    where = f"{path}:{_base_line(path) or '?'} ({BASE_KEY}: {base!r})"
    if not isinstance(base, str) or not base.strip():
        raise ConfigError(f"{where}: expected the path of a config file")
    target = path.parent / base
    if not target.is_file():
        raise ConfigError(f"{where}: base config {target} not found")
    return target


def config_chain(path: str | Path) -> list[Path]:
    """The files that make up a config, base first, the file itself last."""
    chain = [Path(path)]
    seen = [chain[0].resolve()]
    while (base := base_of(chain[0])) is not None:
        if base.resolve() in seen:
            cycle = " -> ".join(str(p) for p in [base, *chain])
            raise ConfigError(f"config base cycle: {cycle}")
        chain.insert(0, base)
        seen.append(base.resolve())
    return chain


def deep_merge(base: dict, update: dict) -> dict:
    """``update`` over ``base``: mappings merged key by key, anything else replaced."""
    out = dict(base)
    for key, value in update.items():
        out[key] = deep_merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def load_config(path: str | Path) -> dict:
    """A config file resolved through its chain of bases, without the ``base`` key."""
    merged: dict = {}
    for part in config_chain(path):
        merged = deep_merge(merged, _read(part))
    merged.pop(BASE_KEY, None)
    return merged


def expand_config_args(args: list[str]) -> list[str]:
    """``--config X`` / ``--config=X`` of a command line, X an overlay, become ``--config BASE …
    --config X`` (the chain, base first); other arguments, and ``--config`` values that are not
    files (jsonargparse also takes a YAML string there), are kept as they are."""
    out: list[str] = []
    k = 0
    while k < len(args):
        arg = args[k]
        if arg == "--config" and k + 1 < len(args):
            value, k = args[k + 1], k + 2
        elif arg.startswith("--config="):
            value, k = arg.split("=", 1)[1], k + 1
        else:
            out.append(arg)
            k += 1
            continue
        chain = config_chain(value) if Path(value).is_file() else [value]
        for part in chain:
            out += ["--config", str(part)]
    return out


def parse_cli(task: str, args: list[str]):
    """The task's (ner, reward, bleurt) LightningCLI after parsing ``args`` as ``python -m train
    <task> …`` does (the same ``--config`` expansion, defaults filled in, links applied), with
    nothing instantiated and nothing run: ``cli.config``, ``cli.run_dir()``."""
    cli_class, classes = task_cli(task)

    class Parse(cli_class):
        def before_instantiate_classes(self) -> None:
            pass

        def instantiate_classes(self) -> None:
            pass

    import warnings

    with warnings.catch_warnings():  # "args and sys.argv[1:] both given": args are the point here
        warnings.filterwarnings("ignore", message="LightningCLI's args parameter", category=UserWarning)
        return Parse(*classes, args=list(args), run=False)


def resolve_cli_config(task: str, path: str | Path, *args: str) -> dict:
    """The config a training run of ``task`` would use for the config file ``path`` (and extra
    ``args``), as a plain mapping with defaults filled in (the ``config`` key dropped)."""
    import yaml

    cli = parse_cli(task, ["--config", str(path), *args])
    out = yaml.safe_load(cli.parser.dump(cli.config, skip_none=False, skip_check=True))
    out.pop("config", None)
    return out


def task_cli(task: str):
    """``(CLI class, the model and datamodule classes it takes)`` of a training task (:mod:`train.tasks`)."""
    from train.tasks import TRAINING_TASKS, load

    if task not in TRAINING_TASKS:
        raise ValueError(f"unknown training task {task!r}; expected one of {list(TRAINING_TASKS)}")
    spec = TRAINING_TASKS[task]
    return load(spec.cli), tuple(load(c) for c in spec.cli_classes)
