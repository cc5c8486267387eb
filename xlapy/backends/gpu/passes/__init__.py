"""The gpu's HLO pipeline (pipeline.py)."""
