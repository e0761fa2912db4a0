import os

# The same single-thread setting the app uses, before any test imports torch.
os.environ.setdefault("OMP_NUM_THREADS", "1")
# The page's DataLoader runs stop after 2.5 s; tests compare every batch, so on a busy machine
# they get longer (the stop itself is tested with an explicit limit).
os.environ.setdefault("WORKBENCH_LOADER_SECONDS", "60")
