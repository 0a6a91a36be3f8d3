"""What the commands compute from a Snapshot: distribution, why-pending and its fixes,
the drain plan with its remedies (drain/) and the planner's core (drain/core/).

No terminal, no files, no API, no processes nor signals: the drain planner's re-plans run
on workers its caller passes (views/drain/workers.py says what it asks of them; cli/workers.py
forks them onto other cores); imports engine/ and model/ only."""
