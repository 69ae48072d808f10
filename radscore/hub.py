"""Hub ids and local folders, one rule for every scorer.

A model argument is a local folder when that folder exists; otherwise, when it has the shape of a
Hub id (``owner/name``), the repository's snapshot is fetched with ``huggingface_hub`` (or taken
from its cache: ``HF_HUB_OFFLINE=1`` works with what was downloaded before) and used as a folder.
Anything else, and a Hub id that cannot be fetched, is one :class:`ModelNotFoundError` line that
says which of the two it was and whether the machine is offline.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from radscore.models import PACKAGED_MINILM, resolve_model_path, standin_folder

HASH_LIMIT = 4 * 2**30  # local weights above this size are not hashed (a minute of disk reads)
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


class ModelNotFoundError(ValueError):
    """A model argument that is neither an existing folder nor a Hub repository we could reach."""


def looks_like_hub_id(name: str) -> bool:
    return bool(_HUB_ID.match(name)) and ".." not in name and not name.endswith((".", "-"))


def offline() -> bool:
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def not_found(name: str, what: str, err: Exception | None = None) -> ModelNotFoundError:
    """The one-line error for a model argument that could not be loaded."""
    if not looks_like_hub_id(name):
        return ModelNotFoundError(f"{what} {name!r}: no such folder (and not a Hub id of the form owner/name)")
    if offline():
        why = "the machine is offline (HF_HUB_OFFLINE=1) and it is not in the Hub cache"
    elif err is not None and "connect" in f"{err!r}{err}".lower():
        why = "the Hugging Face Hub could not be reached (offline?) and it is not in the Hub cache"
    else:
        why = f"the Hub said: {str(err).splitlines()[0] if err and str(err) else type(err).__name__}"
    return ModelNotFoundError(f"{what} {name!r}: no such folder, and it could not be fetched from the "
                              f"Hugging Face Hub: {why}. Pass a local export folder instead")


def snapshot(name: str, what: str = "model") -> str:
    """A local folder for ``name``: the folder itself, the packaged MiniLM, a rehearsal stand-in,
    or the Hub snapshot of a repository id (downloaded or cached)."""
    name = str(name)
    if name == PACKAGED_MINILM:
        return resolve_model_path(name)
    if Path(name).is_dir():
        return name
    if Path(name).exists():
        raise ModelNotFoundError(f"{what} {name!r}: a file, expected an export folder")
    standin = standin_folder(name)
    if standin:
        return standin
    if not looks_like_hub_id(name):
        raise not_found(name, what)
    from huggingface_hub import snapshot_download

    try:
        return snapshot_download(name)
    except (OSError, ValueError) as err:  # huggingface_hub's errors are OSError / HTTP errors
        raise not_found(name, what, err) from None
    except Exception as err:  # an HTTP client error of another class
        if type(err).__module__.split(".")[0] in ("httpx", "requests", "huggingface_hub", "urllib3"):
            raise not_found(name, what, err) from None
        raise


def fingerprint(name: str) -> dict:
    """What identifies the model files behind ``name``: the Hub revision (commit) when it comes from
    the Hub cache, else the SHA-256 of its weight files (first 16 hex digits; skipped above
    :data:`HASH_LIMIT`); ``revision`` is None for a Hub id that is not in the cache here."""
    out: dict = {"source": str(name)}
    folder = None
    if name == PACKAGED_MINILM or Path(name).is_dir():
        folder = Path(resolve_model_path(name))
    elif looks_like_hub_id(name):
        try:
            from huggingface_hub import snapshot_download

            folder = Path(standin_folder(name) or snapshot_download(name, local_files_only=True))
        except Exception:  # not cached here: the revision is unknown
            folder = None
    if folder is None:
        out["revision"] = None
        return out
    parts = folder.resolve().parts
    out["revision"] = parts[parts.index("snapshots") + 1] if "snapshots" in parts[:-1] else None
    weights = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in (".safetensors", ".bin", ".pt", ".pth"))
    size = sum(p.stat().st_size for p in weights)
    if weights and out["revision"] is None and size > HASH_LIMIT:
        out["weights_sha256"] = f"not hashed ({size / 2**30:.1f} GiB of weights)"
    elif weights and out["revision"] is None:
        digest = hashlib.sha256()
        for p in weights:
            digest.update(os.fsencode(str(p.relative_to(folder))))
            with open(p, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
        out["weights_sha256"] = digest.hexdigest()[:16]
    return out
