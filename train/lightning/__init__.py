"""The Lightning machinery every training task shares: the command line and its run folder, the module
base (evaluation hooks, optimiser, parameter counts), samplers, precision, DDP helpers, wandb, quiet
output and the GPU memory model."""
