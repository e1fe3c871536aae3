"""Reports of a finished run: the stage table beside the paper's, the claims with their spreads, held-out kinds, shadow checks, figures."""
