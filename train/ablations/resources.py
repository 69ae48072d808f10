"""What a row needs before it runs: models, datasets and files, each checked up front so that a
missing one gives one clear line naming it (never a traceback from deep inside a training run).

- a model is the packaged MiniLM, a local folder, or a Hub id that is reachable or cached;
- a dataset is a local folder or a Hub dataset id (downloaded with ``huggingface_hub``);
- a file must exist.
Failures raise :class:`ResourceUnavailable` (a :class:`RowUnavailable`): the row shows the
message and the command fails at the end, after writing every row it could.
"""

from __future__ import annotations

import re
from pathlib import Path

from radscore.models import PACKAGED_MINILM, standin_folder

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


class RowUnavailable(Exception):
    """A row that gets no number; the message is what the row shows (after ``failed: ``)."""


class ResourceUnavailable(RowUnavailable):
    """A model, dataset or file that could not be loaded."""


def _reason(err: BaseException) -> str:
    """One short line: what huggingface_hub says first (its later lines are generic advice)."""
    from huggingface_hub import errors

    first = next((ln.strip() for ln in str(err).splitlines() if ln.strip()), "").removeprefix("Got: ")
    first = first[:160] + ("…" if len(first) > 160 else "")
    if isinstance(err, errors.GatedRepoError):
        return f"a gated repository: accept its licence on the Hub and log in (hf auth login); {first}"
    if isinstance(err, errors.RepositoryNotFoundError):
        return f"no such repository, or a private one: {first}"
    if isinstance(err, errors.LocalEntryNotFoundError):
        return f"the Hub cannot be reached and it is not in the local cache: {first}"
    return f"{type(err).__name__}: {first}"


def _standin(source: str, kind: str, what: str, context: str) -> Path | None:
    """The rehearsal's stand-in of a Hub id (``RADSCORE_STANDINS``), resolved where every model and
    dataset id is (:func:`radscore.models.standin_folder`); None outside a rehearsal."""
    try:
        folder = standin_folder(source, kind)
    except FileNotFoundError as err:
        raise ResourceUnavailable(f"{context}{what} {source!r}: {err}") from None
    return Path(folder) if folder else None


def _from_hub(repo_id: str, repo_type: str, allow_patterns: list[str] | None) -> Path:
    from huggingface_hub import snapshot_download

    return Path(snapshot_download(repo_id, repo_type=repo_type, allow_patterns=allow_patterns))


def check_model(source: str, what: str = "model", context: str = "") -> None:
    """Raise unless ``source`` can be loaded here (packaged, local folder, or Hub id reachable/cached)."""
    source = str(source)
    if source == PACKAGED_MINILM or source.startswith("packaged:") or Path(source).exists():
        return
    if not HUB_ID.match(source):
        raise ResourceUnavailable(f"{context}{what} {source!r} is neither a local folder nor a Hugging Face Hub id")
    if _standin(source, "model", what, context):
        return
    try:  # the small files only: enough to know the repository is there and readable
        _from_hub(source, "model", ["config.json", "*.md"])
    except Exception as err:  # huggingface_hub raises connection, gating and not-found errors
        raise ResourceUnavailable(f"{context}could not load {what} {source!r} from the Hugging Face Hub "
                                  f"({_reason(err)})") from None


def check_dataset(source: str, what: str = "dataset", context: str = "") -> None:
    """Raise unless ``source`` is a local folder or a reachable/cached Hub dataset (not downloaded)."""
    source = str(source)
    if Path(source).exists():
        return
    if not HUB_ID.match(source):
        raise ResourceUnavailable(f"{context}{what} {source!r} is neither a local folder nor a Hugging Face Hub id")
    if _standin(source, "dataset", what, context):
        return
    try:
        _from_hub(source, "dataset", ["*.md"])
    except Exception as err:
        raise ResourceUnavailable(f"{context}could not load {what} {source!r} from the Hugging Face Hub "
                                  f"({_reason(err)})") from None


def fetch_dataset(source: str, what: str = "dataset", context: str = "") -> Path:
    """A local folder, or the Hub dataset ``source`` downloaded (cached by huggingface_hub)."""
    source = str(source)
    if Path(source).is_dir():
        return Path(source)
    if not HUB_ID.match(source):
        raise ResourceUnavailable(f"{context}{what} {source!r}: no such folder, and not a Hugging Face Hub id")
    local = _standin(source, "dataset", what, context)
    if local is not None:
        return local
    try:
        return _from_hub(source, "dataset", None)
    except Exception as err:
        raise ResourceUnavailable(f"{context}could not load {what} {source!r} from the Hugging Face Hub "
                                  f"({_reason(err)})") from None


def check_file(path: str, what: str) -> None:
    if not Path(path).is_file():
        raise ResourceUnavailable(f"{what} {path!r}: file not found")


def check_run_resources(flat: dict, where: str) -> None:
    """Check what a training config needs: every ``*.backbone`` model, ``data.init_args.data_dir``
    dataset and ``data.init_args.{rows,val_rows,test_rows}`` file (``flat``: dotted keys of the configs)."""
    for key, value in flat.items():
        leaf = key.rsplit(".", 1)[-1]
        if value in (None, "", []):
            continue
        if leaf == "backbone":
            check_model(value, "model", f"{where} ({key}): ")
        elif key == "data.init_args.data_dir":
            check_dataset(value, "dataset", f"{where} ({key}): ")
        elif key in ("data.init_args.rows", "data.init_args.val_rows", "data.init_args.test_rows"):
            for path in [value] if isinstance(value, str) else list(value):
                check_file(path, f"{where} ({key}): data file")
