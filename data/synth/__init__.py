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

from data.synth.generate import DEFAULT_OUT, DEFAULT_SIZES, generate, generate_default, parse_sizes

__all__ = ["DEFAULT_OUT", "DEFAULT_SIZES", "generate", "generate_default", "parse_sizes"]
