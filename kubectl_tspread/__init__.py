"""kubectl-tspread: topology spread constraints, visible and safe to operate."""

__version__ = "0.1.0"
