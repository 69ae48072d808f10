"""How well the metrics do on the SYNTHETIC sets."""
