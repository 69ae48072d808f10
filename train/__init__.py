"""radscore training code (Lightning modules, losses, the TPE search, export). Used from the
repository root: ``python -m train <command> …``."""
