"""Recording: running a function on active inputs (recording.py), arrays
created inside it (creation.py), everything adsim changes outside itself
while it runs (interpose.py), and which library call the user's code is
making (callers.py)."""
