"""How fast radscore scores, and whether it matches the released ratescore package."""
