"""Print the variables the launcher sets, and the arguments."""
import os
import sys

e = os.environ
print("env", e["RANK"], e["LOCAL_RANK"], e["WORLD_SIZE"], e["MASTER_ADDR"], e["MASTER_PORT"], sys.argv[1:], flush=True)
