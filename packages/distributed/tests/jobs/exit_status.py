"""Rank 1 exits with status 5 at once; rank 0 would run for a minute: the launcher must end it."""
import os
import sys
import time

if os.environ["RANK"] == "1":
    sys.exit(5)
time.sleep(60)
print("rank 0 finished", flush=True)
