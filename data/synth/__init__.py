"""The SYNTHETIC labelled benchmark generator: reference reports edited with known errors.

Offline stand-in for ReXVal, RaTE-Eval and GPT-4-scored pairs, so that every training and tuning
path of the project has labelled data. Everything it writes says *synthetic* (folder and file
names, a ``synthetic`` column or key, READMEs).

Modules, by responsibility:
- :mod:`~data.synth.lexicon`: the YAML lexicons of ``data/lexicons/`` (each documents itself);
- :mod:`~data.synth.draft`: a candidate under construction, with exact spans for every edit;
- :mod:`~data.synth.edits`: the six ReXVal error edits and the clinically-significant rule;
- :mod:`~data.synth.rewrites`: synonym/reorder rewrites, negation flips, spelling/grammar typos;
- :mod:`~data.synth.catalog`: the seeded loop that picks and applies edits;
- :mod:`~data.synth.labels`: labels from edits (RadCliQ, MRScore, ClinicalBLEURT, Task 1/2,
  simulated raters);
- :mod:`~data.synth.generate`: the sets, :func:`generate` and :func:`generate_default`;
- :mod:`~data.synth.writers`: the published file formats.
"""


from __future__ import annotations

import importlib
import sys
import types

__all__ = ["DEFAULT_OUT", "DEFAULT_SIZES", "generate", "generate_default", "parse_sizes"]


def __getattr__(name: str):
    """The public names of :mod:`data.synth.generate`, imported on first use: importing one module
    of the package (``data.synth.edits``) loads no generator."""
    if name in __all__:
        return getattr(importlib.import_module("data.synth.generate"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])


class _Package(types.ModuleType):
    """``data.synth.generate`` names the function, as the eager import made it: the import system
    would set the package attribute to the submodule of the same name when that is first imported."""

    def __setattr__(self, name: str, value) -> None:
        if name == "generate" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
