"""The drain planner's core: a simulated cluster, the steps played on it, the search
for a safe order, placement and the array paths."""
