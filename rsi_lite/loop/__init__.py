"""The five-phase loop (Base -> RSR-1 -> RPR-1 -> RSR-2 -> RPR-2), its controls and profiles."""
