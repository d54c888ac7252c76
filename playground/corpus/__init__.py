"""All of a person's runs at once: find them in files, folders and archives (``finder``), evaluate
each under the policies with compare's own numbers (``evaluate``), on a local process pool or a
Dask cluster (``executors``), and sweep a grid of settings over the whole corpus (``sweep``)."""

from .evaluate import Evaluation, Setup, evaluate_batch, load, partition
from .executors import Task, run
from .finder import Found, Source, uploaded
from .sweep import Grid, summarize, tune_batch

__all__ = ["Evaluation", "Found", "Grid", "Setup", "Source", "Task", "evaluate_batch", "load", "partition", "run",
           "summarize", "tune_batch", "uploaded"]
