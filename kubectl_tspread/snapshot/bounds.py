"""Bounds on what an input may hold, shared by the JSON walk (jsonscan.py, jsonbits.py) and
the YAML reader (yamlread.py)."""

# Kubernetes objects nest a few dozen levels at most (a CRD's schema is the deepest kind);
# 200 leaves room for any of them and keeps every recursive decoder far from its limit
MAX_DEPTH = 200
