"""What training costs: step time, the weight search's speed, memory, GPU-hours."""
