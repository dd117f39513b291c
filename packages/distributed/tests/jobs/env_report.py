"""Print the variables the launcher sets, and the arguments."""
import os
import sys

e = os.environ
fields = ["env", e["RANK"], e["LOCAL_RANK"], e["WORLD_SIZE"], e["MASTER_ADDR"], e["MASTER_PORT"], str(sys.argv[1:])]
# One write of the whole line: the ranks share the launcher's stdout, and under PYTHONUNBUFFERED=1 print()
# writes each argument, separator and the newline separately, so two ranks' lines could interleave.
sys.stdout.write(" ".join(fields) + "\n")
sys.stdout.flush()
