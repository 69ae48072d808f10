"""Running the paper configs before a GPU is rented: the rehearsal, the stand-ins of the papers' models
and datasets, and tiny random models for tests and notebooks."""
