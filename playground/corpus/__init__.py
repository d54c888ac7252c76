"""All of a person's runs at once: find them in files, folders and archives (``finder``), evaluate
each under the strategies with compare's own numbers (``evaluate``), on a local process pool or a
Dask cluster (``executors``), and sweep a grid of settings over the whole corpus (``sweep``)."""
