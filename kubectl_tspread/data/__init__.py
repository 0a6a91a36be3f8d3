"""Package data: demo-cluster.json, the built-in demo cluster written by scripts/gen-demo."""
