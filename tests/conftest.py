import os

# The same single-thread setting the app uses, before any test imports torch.
os.environ.setdefault("OMP_NUM_THREADS", "1")
