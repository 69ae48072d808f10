"""Reading training configs outside a run.

A training run composes its config files itself: jsonargparse merges every ``--config`` of the
command line in order (mappings key by key, anything else replaced). A paper-family overlay lives
in a folder named after its base (``configs/reward/paper_llama3/phi_2.yaml`` over
``configs/reward/paper_llama3.yaml``) and is run after it::

    python -m train fit --config configs/reward/paper_llama3.yaml --config configs/reward/paper_llama3/phi_2.yaml

What reads configs without running them (the rehearsal, the memory probe, the ablation runner,
tests) uses :func:`config_chain` for that folder rule and :func:`read_configs` for the files as
written; :func:`train.lightning.cli.resolve` gives the config a run would use, parsed by the
training CLI itself.
"""

from __future__ import annotations

from pathlib import Path


class ConfigError(ValueError):
    """A config file that cannot be read."""


def read_yaml(path: str | Path) -> dict:
    """One config file as a mapping (an empty file is ``{}``)."""
    import yaml

    path = Path(path)
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


def overlay_base(path: str | Path) -> Path | None:
    """The base of a paper-family overlay: ``<folder>.yaml`` beside the overlay's folder, or None."""
    base = Path(path).parent.with_suffix(".yaml")
    return base if base.is_file() else None


def config_chain(path: str | Path) -> list[Path]:
    """The files a paper config is run with, base first, the file itself last."""
    chain = [Path(path)]
    while (base := overlay_base(chain[0])) is not None:
        chain.insert(0, base)
    return chain


def deep_merge(base: dict, update: dict) -> dict:
    """``update`` over ``base``: mappings merged key by key, anything else replaced (jsonargparse's rule)."""
    out = dict(base)
    for key, value in update.items():
        out[key] = deep_merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def read_configs(*paths: str | Path) -> dict:
    """Config files merged in order, as written (no defaults filled in)."""
    merged: dict = {}
    for path in paths:
        merged = deep_merge(merged, read_yaml(path))
    return merged


def init_args(cfg: dict, section: str) -> dict:
    """``cfg[section]["init_args"]`` (``model`` or ``data``), ``{}`` when absent."""
    return ((cfg.get(section) or {}).get("init_args") or {})


def config_args(paths) -> list[str]:
    """``--config P`` for each path, in order."""
    return [arg for path in paths for arg in ("--config", str(path))]
