"""radscore's data layer: readers for the published formats, the authored sample corpus and
the synthetic benchmark generator. Used from the repository root (``python -m data …``)."""
