"""What the commands compute from a Snapshot: distribution, why-pending and its fixes,
the drain plan with its remedies (drain/) and the planner's core (drain/core/).

No terminal, no files, no API (views/drain/parallel.py forks the remedy re-plans onto other
cores); imports engine/ and model/ only."""
