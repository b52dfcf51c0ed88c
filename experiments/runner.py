"""Run grid cells in parallel (joblib/loky or dask.distributed), one result file per cell.

Cells are sent to workers one at a time, costliest first (:func:`schedule`); a worker keeps the
data and sampled task of the last tasks it ran (the cells sharing dataset, protocol, setting
and seed, which differ only in method or masking), so the next cell of the same task neither
loads nor samples again. With loky the worker stores each cell as soon as it finishes; with dask
(whose workers may be on other machines) the client stores what comes back. Cells are stored in
a :class:`experiments.cells.CellStore`; a rerun skips every cell stored ``ok`` and recomputes
failed and missing ones only.

Per-item scores come back from ``protocol.evaluate`` in either of two ways: rows of the result
with a non-null ``y_score`` column (and ``y_true``; metric rows leave them empty), or a DataFrame
in ``result.attrs["scores"]``.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import socket
import threading
import time
import traceback
from collections.abc import Iterable
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from experiments.cells import Cell, CellStore, normalise, write_atomic
from experiments.heap import keep_freed_memory
from experiments.suite import Suite
from stylo.features.shared_counts import shared_counts
from stylo.llm.backend import model_clock
from stylo.progress import listening
from stylo.protocols.base import NoTrainingData, fit_seconds, task_texts

__all__ = [
    "RunSummary",
    "dask_distributed",
    "execute_cell",
    "execute_task",
    "machine",
    "run",
    "schedule",
]

METRIC_COLUMNS = ("metric", "value", "n", "group")
SCORE_COLUMNS = ("y_true", "y_score")
_TRACEBACK_LINES = 25


# -- worker side ---------------------------------------------------------------------------


def _split_result(result: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    if not isinstance(result, pd.DataFrame):
        raise TypeError(
            f"protocol.evaluate returned {type(result).__name__}, expected a pandas DataFrame"
        )
    scores = result.attrs.get("scores")
    if "y_score" in result.columns:
        is_score = result["y_score"].notna()
        item_rows = result.loc[is_score].dropna(axis=1, how="all")
        scores = item_rows if scores is None else pd.concat([scores, item_rows])
        result = result.loc[~is_score].drop(
            columns=[c for c in SCORE_COLUMNS if c in result.columns]
        )
    missing = [c for c in METRIC_COLUMNS if c not in result.columns]
    if missing:
        raise ValueError(
            f"protocol.evaluate result lacks column(s) {missing}; it has {list(result.columns)}"
        )
    if scores is not None:
        scores = scores.drop(
            columns=[c for c in METRIC_COLUMNS if c in scores.columns and c != "group"]
        ).reset_index(drop=True)
        if "y_true" in scores.columns:
            scores["y_true"] = scores["y_true"].astype(bool)
    return result.reset_index(drop=True), scores


def _jsonable_rows(frame: pd.DataFrame) -> list[dict]:
    return normalise(json.loads(frame.to_json(orient="records", double_precision=15)))


def _safe_info(info) -> dict:
    try:
        return normalise(dict(info or {}))
    except TypeError:
        return {k: str(v) for k, v in dict(info or {}).items()}


@contextmanager
def _cell_progress(cell: Cell, progress_dir: str | None):
    """While the cell runs, the method's :func:`stylo.progress.advance` calls go to this
    worker's file in ``progress_dir``, which the client's progress bar reads."""
    if progress_dir is None:
        yield
        return
    path = Path(progress_dir) / f"{os.getpid()}.json"
    label = f"{cell.method}{'+' + cell.masking if cell.masking else ''} on {cell.dataset}"

    def tell(stage: str, done: int, total: int) -> None:
        doc = {"cell": label, "stage": stage, "done": done, "total": total}
        write_atomic(path, json.dumps(doc).encode("utf-8"), durable=False)

    tell("", 0, 0)
    try:
        with listening(tell):
            yield
    finally:
        path.unlink(missing_ok=True)


def _started(cell: Cell) -> dict:
    return {
        "key": cell.key,
        "spec": cell.spec(),
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "started": datetime.now(timezone.utc).isoformat(),
    }


def _failure(exc: Exception) -> dict:
    tb = traceback.format_exc().rstrip().splitlines()
    return {
        "status": "failed",
        "error": f"{type(exc).__name__}: {exc}",
        "traceback": "\n".join(tb[-_TRACEBACK_LINES:]),
    }


def _finished(record: dict) -> dict:
    return {**record, "finished": datetime.now(timezone.utc).isoformat()}


def execute_cell(
    cell: Cell, protocol, task, suite: Suite, progress_dir: str | None = None
) -> tuple[dict, pd.DataFrame | None]:
    """Run one cell on its sampled ``task`` (from :meth:`Suite.task`); never raises for an
    ordinary error (the record says ``failed``).

    Returns the record (JSON-able dict) and the per-item scores (or None). With
    ``progress_dir``, progress inside the cell is written there (see :func:`_cell_progress`).
    """
    record = _started(cell)
    t0 = time.perf_counter()
    fit0, model0 = fit_seconds(), model_clock()
    scores = None
    stack = ExitStack()
    try:
        stack.enter_context(_cell_progress(cell, progress_dir))
        result = protocol.evaluate(suite.method(cell), task)
        runtime = time.perf_counter() - t0
        rows, scores = _split_result(result)
        model = model_clock() - model0  # a language model's answers, cache replays included
        record.update(
            status="ok",
            rows=_jsonable_rows(rows),
            runtime=runtime,
            fit_seconds=fit_seconds() - fit0,
            model_calls=model.calls,
            model_cached=model.cached,
            model_seconds=model.seconds,
            info=_safe_info(getattr(task, "info", {})),
        )
    except NoTrainingData as exc:  # the method cannot run on this task: not a failure
        record.update(status="inapplicable", error=str(exc), runtime=time.perf_counter() - t0)
    except Exception as exc:  # recorded, so one bad cell does not stop the grid
        record.update(_failure(exc), runtime=time.perf_counter() - t0)
    finally:
        stack.close()
    return _finished(record), scores


def execute_task(
    suite: Suite, cells: list[Cell], store_dir: str | None = None, progress_dir: str | None = None
) -> list[tuple[dict, pd.DataFrame | None]]:
    """Load the data and sample the task of ``cells`` (cells of one ``task_key``) once, then
    run the cells in order; when the task cannot be made, every cell fails with that error.

    With ``store_dir`` each cell is stored there as soon as it finishes, so an interrupted
    task loses no finished cell; its record then says ``stored`` and its scores are not sent
    back. ``progress_dir``: see :func:`execute_cell`.
    """
    keep_freed_memory()  # a worker's cells reuse each other's memory (experiments/heap.py)
    store = CellStore(store_dir) if store_dir is not None else None
    t0 = time.perf_counter()
    try:
        with _cell_progress(cells[0], progress_dir):
            protocol, task = suite.task(cells[0])
        problem = None
    except Exception as exc:  # e.g. a corpus that loaded while listing settings is gone
        problem = _failure(exc)
    # the first cell's record carries the time its task took to load and sample
    task_seconds = time.perf_counter() - t0
    out = []
    with _shared_task_counts(task if problem is None else None):
        for cell in cells:
            if problem is None:
                record, scores = execute_cell(cell, protocol, task, suite, progress_dir)
                record["task_seconds"] = task_seconds
            else:
                failed = {**_started(cell), **problem, "runtime": task_seconds}
                record, scores = _finished(failed), None
            task_seconds = 0.0
            if store is not None:
                store.write(record, scores)
                record, scores = {**record, "stored": True}, None
            out.append((record, scores))
    return out


#: characters of a task's texts up to which its cells share their n-gram counts: one unpruned
#: count per counting configuration is held while they run (a Rethinking-AV task of PAN19's
#: 1,000 texts: about 100 MB for character 1-4-grams), not for a whole PAN attribution set
_SHARED_COUNT_CHARS = 10_000_000


def _shared_task_counts(task):
    """``shared_counts`` of the task's texts, so that its cells' n-gram extractors count each
    text once per configuration, not once per method and fit (three classical methods count
    character 1-4-grams, three character 4-grams; the matrices are those of counting afresh);
    a null context for no task or a larger one."""
    texts = [] if task is None else [t for t in task_texts(task) if isinstance(t, str)]
    if not texts or sum(map(len, texts)) > _SHARED_COUNT_CHARS:
        return nullcontext()
    return shared_counts(texts)


# -- client side ---------------------------------------------------------------------------


@dataclass
class RunSummary:
    """Counts of one ``run`` call: cells in the grid, found done, computed now, failed now,
    left for later (``max_cells``) and, of those computed now, not applicable (a method that
    must be fitted on a task with no training data)."""

    total: int
    already_done: int
    computed: int
    failed: int
    not_run: int
    seconds: float
    inapplicable: int = 0

    def __str__(self) -> str:
        extra = f", {self.inapplicable} not applicable" if self.inapplicable else ""
        return (
            f"{self.total} cells: {self.already_done} already done, {self.computed} computed "
            f"({self.failed} failed{extra}), {self.not_run} not run; {self.seconds:.1f} s"
        )


#: how far a loky worker's memory may grow past its size after its first task before loky takes
#: it for a leak and restarts the worker (loky's own limit: 300 MB). The model cells (torch,
#: llama.cpp, sentence-transformers) grow a worker by more than that once, with what they
#: import and keep loaded; each restart then cost the quick run about 4 s of a worker (start,
#: imports, Numba's cached kernels loaded again), twice a run. A real leak still restarts it.
WORKER_MEMORY_GROWTH = 3 * 2**30


def _loky_task(*payload) -> list[tuple[dict, pd.DataFrame | None]]:
    """:func:`execute_task` in a loky worker, which first raises the worker's leak limit to
    :data:`WORKER_MEMORY_GROWTH` (loky reads it after every task, in the worker)."""
    from joblib.externals.loky import process_executor

    if (
        getattr(process_executor, "_MAX_MEMORY_LEAK_SIZE", WORKER_MEMORY_GROWTH)
        < WORKER_MEMORY_GROWTH
    ):
        process_executor._MAX_MEMORY_LEAK_SIZE = WORKER_MEMORY_GROWTH
    return execute_task(*payload)


def _loky_results(payloads: list[tuple], n_jobs: int) -> Iterable:
    from joblib import Parallel, delayed

    par = Parallel(n_jobs=n_jobs, backend="loky", return_as="generator_unordered", batch_size=1)
    return par(delayed(_loky_task)(*p) for p in payloads)


def release_loky_workers() -> None:
    """Let the loky workers exit now, without waiting for them: the caller goes on writing its
    tables, plots and report while they tear down. Otherwise loky joins them at interpreter
    exit, and a worker that loaded torch and llama.cpp takes about 2 s to exit (the quick
    run's last seconds). A later loky run starts new workers."""
    from joblib.externals.loky import reusable_executor

    executor = getattr(reusable_executor, "_executor", None)
    if executor is not None:
        executor.shutdown(wait=False)


def dask_distributed():
    """The ``dask.distributed`` module, or RuntimeError saying what to install."""
    try:
        import dask.distributed
    except ImportError as exc:
        raise RuntimeError(
            f"--backend dask needs dask.distributed ({exc}): pip install 'stylo[dask]'"
        ) from exc
    return dask.distributed


def _dask_results(payloads: list[tuple], n_jobs: int, scheduler: str | None) -> Iterable:
    dd = dask_distributed()
    cluster = None
    if scheduler:
        client = dd.Client(scheduler)
    else:
        cluster = dd.LocalCluster(
            n_workers=max(1, n_jobs),
            threads_per_worker=1,
            host="127.0.0.1",
            dashboard_address=None,
            processes=True,
            silence_logs=40,
        )
        client = dd.Client(cluster)
    try:
        futures = [
            client.submit(execute_task, *p, pure=False, key=f"task-{p[1][0].key}") for p in payloads
        ]
        try:
            for fut in dd.as_completed(futures):
                yield fut.result()
        finally:
            client.cancel(futures)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


#: rough work of a cell by its method's kind, relative to a classical method's (the reference
#: grid's mean cell: classical 1.6 s, embedding 49 s, neural 85 s, local LLM 644 s)
_KIND_COST = {"embedding": 30.0, "neural": 50.0, "llm": 400.0}
#: kinds whose cells of one task run in one worker task (see :func:`schedule`)
_TOGETHER = ("embedding", "llm")


def schedule(cells: list[Cell], suite: Suite) -> list[list[Cell]]:
    """The worker tasks of ``cells``, costliest first (longest-processing-time-first, Graham
    1969, with rough costs), so that the last cells of a run are short ones and no worker
    idles while another finishes a long one.

    Each cell is its own worker task, except that some cells of one task go together, in the
    grid's order:

    - its LLM and embedding cells: ``llm-prompt-both-orders`` then finds ``llm-prompt``'s
      answers in the response cache instead of asking again beside it, and one worker, not
      two, imports sentence-transformers (7 s) and loads the embedding model for
      ``embedding`` and ``rag-embedding-llm``;
    - its cheap cells (classical methods on a protocol of ``relative_cost`` 1), so that one
      worker samples the task once for all of them: one cell per worker task drew most tasks
      three times (in each worker, and again for the memo group below), 1.9 of the reference
      grid's 36 worker-minutes;
    - on costlier protocols, the cells of methods that share a measurement memo
      (``MethodSpec.shares``: ``cdm``, ``cdm-cal``, ``ncd``, ``ncd-cal`` and ``ensemble``'s
      cdm base), so that the pairs are compressed once, not once per method (``cdm-cal``
      after ``cdm`` on PAN18's test set: 0.6 s instead of 25 s). Cheap cells share them too,
      being together.

    A group's cost is the sum over its cells of their method kind's cost (:data:`_KIND_COST`,
    else 1) times their protocol's ``relative_cost``; equal costs keep the grid's order. Only
    the order changes: every cell computes the same figures wherever and whenever it runs.
    """

    def cell_cost(c: Cell) -> float:
        return _KIND_COST.get(suite.methods[c.method].kind, 1.0) * float(
            getattr(suite.protocols[c.protocol], "relative_cost", 1.0)
        )

    groups: list[list[Cell]] = []
    together: dict[tuple, list[Cell]] = {}
    for c in cells:
        method = suite.methods[c.method]
        if method.kind in _TOGETHER:
            share = "models"
        elif cell_cost(c) == 1.0:
            share = "cheap"
        else:
            share = method.shares
        if share is None:
            groups.append([c])
            continue
        if (c.task_key, share) not in together:
            together[c.task_key, share] = []
            groups.append(together[c.task_key, share])
        together[c.task_key, share].append(c)

    return sorted(groups, key=lambda group: sum(map(cell_cost, group)), reverse=True)


def run(
    cells: list[Cell],
    out_dir: str | Path,
    suite: Suite,
    *,
    backend: str = "loky",
    n_jobs: int = 1,
    scheduler: str | None = None,
    max_cells: int | None = None,
    progress: bool = True,
) -> RunSummary:
    """Compute every cell not already stored ``ok`` under ``out_dir`` with ``suite``'s
    protocols, data, methods and options, and store it.

    ``max_cells`` stops after that many cells (a rerun continues). KeyboardInterrupt stops
    the run; finished cells stay stored.
    """
    if backend not in ("loky", "dask"):
        raise ValueError(f"backend must be 'loky' or 'dask', got {backend!r}")
    t0 = time.perf_counter()
    store = CellStore(out_dir)
    store.dir.mkdir(parents=True, exist_ok=True)
    seen, unique = set(), []
    for c in cells:
        if c.key not in seen:
            seen.add(c.key)
            unique.append(c)
    pending = [c for c in unique if not store.is_done(c.key)]
    done_before = len(unique) - len(pending)
    todo = pending if max_cells is None else pending[: max(0, max_cells)]
    store_dir = None if backend == "dask" else str(out_dir)
    # progress inside cells travels through files, so only workers on this machine report it
    progress_dir = str(store.dir / ".progress") if progress and store_dir else None
    if progress_dir:
        # notes left by a run that was killed would show as live work
        shutil.rmtree(progress_dir, ignore_errors=True)
        Path(progress_dir).mkdir()
    payloads = [(suite, group, store_dir, progress_dir) for group in schedule(todo, suite)]
    computed = failed = inapplicable = 0
    if payloads:
        results = (
            _dask_results(payloads, n_jobs, scheduler)
            if backend == "dask"
            else _loky_results(payloads, n_jobs)
        )
        from tqdm.auto import tqdm

        with (
            tqdm(total=len(todo), unit="cell", disable=not progress, desc="stylo grid") as bar,
            _showing_progress(bar, progress_dir),
        ):
            for task_results in results:
                for record, scores in task_results:
                    if not record.get("stored"):
                        store.write(record, scores)
                    computed += 1
                    failed += record["status"] == "failed"
                    inapplicable += record["status"] == "inapplicable"
                if failed:  # the postfix is the workers' progress, see _showing_progress
                    bar.set_description_str(f"stylo grid ({failed} failed)", refresh=False)
                bar.update(len(task_results))
    return RunSummary(
        total=len(unique),
        already_done=done_before,
        computed=computed,
        failed=failed,
        not_run=len(pending) - len(todo),
        seconds=time.perf_counter() - t0,
        inapplicable=inapplicable,
    )


@contextmanager
def _showing_progress(bar, progress_dir: str | None, every: float = 0.5):
    """While the block runs, a thread puts what the workers' progress files say (the cell, its
    stage and counts) into the bar's postfix, so a cell of minutes does not freeze the bar."""
    if progress_dir is None:
        yield
        return
    stop = threading.Event()

    def poll() -> None:
        while not stop.wait(every):
            notes = []
            for path in sorted(Path(progress_dir).glob("[!.]*.json")):
                try:
                    doc = json.loads(path.read_text(encoding="utf-8"))
                except (OSError, ValueError):  # finished and removed, or being replaced
                    continue
                count = f" {doc['stage']} {doc['done']:,}/{doc['total']:,}" if doc["total"] else ""
                notes.append(f"{doc['cell']}{count}")
            bar.set_postfix_str("; ".join(notes), refresh=True)

    thread = threading.Thread(target=poll, name="stylo-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        shutil.rmtree(progress_dir, ignore_errors=True)


def machine() -> dict:
    """Where a run happened, for the manifest."""
    return {
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }
