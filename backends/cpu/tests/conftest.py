import os
import sys

sys.path.insert(0, os.path.dirname(__file__))  # the tests share helpers in _arrays.py
