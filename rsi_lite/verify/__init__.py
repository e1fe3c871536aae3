"""Verdicts after the agent phase: the verifier (tests copied in, CTRF parsed), shadow twins that catch hard-coded answers, task checks."""
