"""Execute the book's notebooks into its jupyter-cache, several at a time, before the build.

Jupyter Book executes the notebooks whose outputs are not cached one after the other, as
it reads them: a cold build on two cores used one. This script does that work first, with
``--jobs`` notebooks at a time (each kernel on one core: :data:`PORTABLE_NUMERICS`), the
longest first — by the time each took in this cache's last build, else by the time it
took when it was measured on the 2-core development machine (:data:`MEASURED_SECONDS`),
else by its size: started last, a long training would keep one core busy alone while the
other is idle — and stores every result in
the cache the build reads (``execute_notebooks: cache`` in ``_config.yml``): the build
then finds them all there. A notebook is read exactly as MyST-NB reads it, so that the
cache recognises it; one that fails stops the script with its traceback.

The kernels load the IPython extensions :mod:`book_build.figures.translation`, which
stores with every figure its renderings in the languages of
``locales/*/LC_MESSAGES/figures.po``, and :mod:`book_build.figures.resolution`, which draws
every figure at twice its resolution; the pages' code, by which the cache knows a notebook,
is unchanged. A cached notebook whose figures lack a rendering, were translated with
other translations than the catalogues give today, or were drawn at the old resolution, is
executed again.

    python -m book_build.execute [--jobs 2] [--output-root .]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import sys
import time
from pathlib import Path

import nbformat
import yaml
from jupyter_cache import get_cache
from jupyter_cache.base import CacheBundleIn
from jupyter_cache.executors.utils import single_nb_execution
from myst_nb.core.read import read_myst_markdown_notebook
from myst_parser.config.main import MdParserConfig

from attention_course.progress import BUILD_VARIABLE  # progress bars read it

from .figures import resolution as figure_resolution
from .figures import translation as figure_translation
from .paths import LOCALES, ROOT, cache_folder
from .toc import is_notebook, toc_pages

TIMES_FILE = ".execution-times.json"       # in the cache's folder: seconds per page, last build
# Seconds per page measured on the 2-core development machine (a build's TIMES_FILE): the
# order of a first build, longest first.
MEASURED_SECONDS = Path(__file__).with_name("notebook_seconds.json")
# every kernel renders each figure in the catalogues' languages too, all at twice the
# resolution (the second extension wraps what the first one draws)
# The same numbers on every x86-64 machine: PyTorch's kernels without the processor's own
# vector instructions (AVX2 and AVX-512 round differently, and a model trained for
# thousands of steps amplifies the last bit), MKL on its reproducible code path
# (Conditional Numerical Reproducibility) and oneDNN on the same instruction set. The pages
# state what their training measured (and assert it); with these, a book built on another
# processor measures the same. One thread per kernel, on any number of cores (a sum split
# among threads adds in another order): the cores run notebooks side by side instead.
PORTABLE_NUMERICS = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE",
                     "ONEDNN_MAX_CPU_ISA": "SSE41", "OMP_NUM_THREADS": "1",
                     "MKL_NUM_THREADS": "1"}
KERNEL_ARGUMENTS = [f"--IPKernelApp.extra_extensions={figure_translation.__name__}",
                    f"--IPKernelApp.extra_extensions={figure_resolution.__name__}"]


def book_pages(root: Path) -> list[Path]:
    """The notebooks of ``_toc.yml`` that the build executes (not ``execute``'s
    ``exclude_patterns``), as source files."""
    config = yaml.safe_load((root / "_config.yml").read_text())
    excluded = config.get("execute", {}).get("exclude_patterns", [])
    pages = []
    for name in toc_pages(root):
        for suffix in (".md", ".ipynb"):
            path = root / f"{name}{suffix}"
            if path.exists() and not any(path.match(pattern) for pattern in excluded) \
                    and is_notebook(path):
                pages.append(path)
    return pages


def read_notebook(path: Path) -> nbformat.NotebookNode:
    """The notebook as MyST-NB reads it (the cache matches notebooks by their code)."""
    if path.suffix == ".ipynb":
        return nbformat.read(path, as_version=4)
    return read_myst_markdown_notebook(path.read_text(), config=MdParserConfig(),
                                       add_source_map=True)


def _execute(path: str, timeout: int) -> tuple[str, dict, float, str | None]:
    """Run in a worker process: execute one notebook in its own folder."""
    os.environ[BUILD_VARIABLE] = "1"
    os.environ[figure_translation.LOCALES_VARIABLE] = str(LOCALES)
    os.environ.update(PORTABLE_NUMERICS)
    notebook = read_notebook(Path(path))
    result = single_nb_execution(notebook, cwd=str(Path(path).parent), timeout=timeout,
                                 allow_errors=False, meta_override=True,
                                 extra_arguments=KERNEL_ARGUMENTS)
    error = None if result.err is None else (result.exc_string or repr(result.err))
    return path, dict(notebook), result.time, error


def figures_are_current(notebook: nbformat.NotebookNode,
                        catalogues: dict[str, dict[str, str]]) -> bool:
    """Whether every figure of an executed notebook has its renderings in the languages of
    ``catalogues``, made with the translations they give today, at the book's resolution."""
    metadata = [output.get("metadata", {}).get("image/png", {})
                for cell in notebook.cells if cell.cell_type == "code"
                for output in cell.get("outputs", []) if "image/png" in output.get("data", {})]
    return all(figure_translation.is_current(m, catalogues) and figure_resolution.is_current(m)
               for m in metadata)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--output-root", default=str(ROOT),
                        help="the folder whose _build/ holds the cache (jupyter-book's "
                        "--path-output; default: the repository)")
    args = parser.parse_args(argv)
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    timeout = int(config.get("execute", {}).get("timeout", 900))
    cache_dir = cache_folder(Path(args.output_root))
    cache = get_cache(str(cache_dir))
    times_path = cache_dir / TIMES_FILE
    times = json.loads(MEASURED_SECONDS.read_text())
    if times_path.exists():
        times.update(json.loads(times_path.read_text()))

    catalogues = figure_translation.load_catalogues(LOCALES)
    outdated = []
    for path in book_pages(ROOT):
        try:
            record = cache.match_cache_notebook(read_notebook(path))
        except KeyError:
            outdated.append(path)
            continue
        if not figures_are_current(cache.get_cache_bundle(record.pk).nb, catalogues):
            outdated.append(path)
    if not outdated:
        print("every notebook's outputs are cached")
        return 0
    name = {path: str(path.relative_to(ROOT)) for path in outdated}
    outdated.sort(key=lambda p: (times.get(name[p], 0), p.stat().st_size), reverse=True)
    jobs = max(1, min(args.jobs, len(outdated)))
    print(f"executing {len(outdated)} notebooks, {jobs} at a time", flush=True)
    started, failed = time.perf_counter(), []
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(_execute, str(path), timeout) for path in outdated]
        for future in concurrent.futures.as_completed(futures):
            path, executed, seconds, error = future.result()
            page = str(Path(path).relative_to(ROOT))
            if error is not None:
                failed.append((page, error))
                print(f"  FAILED {page} after {seconds:.0f} s", flush=True)
                continue
            notebook = nbformat.from_dict(executed)
            cache.cache_notebook_bundle(
                CacheBundleIn(notebook, path, data={"execution_seconds": seconds}),
                check_validity=False, overwrite=True)
            times[page] = round(seconds, 1)
            print(f"  {page}: {seconds:.0f} s", flush=True)
    times_path.write_text(json.dumps(times, indent=1, sort_keys=True))
    print(f"executed in {time.perf_counter() - started:.0f} s", flush=True)
    for page, error in failed:
        print(f"\n{page} failed:\n{error}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
