"""Run grid cells in parallel (joblib/loky or dask.distributed), one result file per cell.

Cells are sent to workers a task at a time (the cells sharing dataset, protocol, setting and
seed, which differ only in method or masking), so a worker loads the data and samples the task
once for all of them. With loky the worker stores each cell as soon as it finishes; with dask
(whose workers may be on other machines) the client stores what comes back.

Each finished cell is stored as ``<out>/cells/<key>.json`` (spec, status, metric rows, runtime,
task info, error and traceback for a failed cell), written atomically: a temporary file in the
same folder is renamed over the target, so a reader never sees half a file. Per-item scores, when
the protocol returns them, go to ``<key>.scores.parquet`` (``.csv.gz`` without pyarrow), written
before the JSON, which is the cell's commit marker. A rerun skips every cell whose JSON says
``ok`` and recomputes failed and missing ones only; a record file that is not a JSON object
(truncated by a full disk, edited by hand) is reported on one stderr line and read as missing.

Per-item scores come back from ``protocol.evaluate`` in either of two ways: rows of the result
with a non-null ``y_score`` column (and ``y_true``; metric rows leave them empty), or a DataFrame
in ``result.attrs["scores"]``.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import platform
import shutil
import socket
import sys
import tempfile
import time
import threading
import traceback
from collections import OrderedDict
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable, Mapping

import pandas as pd

from experiments.grid import Cell, configured, normalise
from experiments.methods import (
    DEFAULT_OPTIONS,
    MASKINGS,
    METHODS,
    Masked,
    MethodOptions,
    MethodSpec,
    WithParams,
)
from stylo.progress import listening

__all__ = ["CellStore", "RunSummary", "dask_distributed", "execute_cell", "execute_task", "run",
           "write_atomic"]

METRIC_COLUMNS = ("metric", "value", "n", "group")
SCORE_COLUMNS = ("y_true", "y_score")
_TRACEBACK_LINES = 25


def write_atomic(path: Path, data: bytes, durable: bool = True) -> None:
    """Write ``data`` to ``path`` so that ``path`` is either absent, the old file or complete;
    ``durable`` also syncs it to disk first (results do; throw-away progress notes need not)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _has_parquet() -> bool:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


class CellStore:
    """The ``cells/`` folder of a run: one JSON record (and maybe a scores file) per cell."""

    def __init__(self, out_dir: str | Path):
        self.dir = Path(out_dir) / "cells"

    def record_path(self, key: str) -> Path:
        return self.dir / f"{key}.json"

    @staticmethod
    def _load(path: Path, then: str) -> dict | None:
        """The record in ``path``, or None when it is not a JSON object, which is reported on
        one stderr line naming the file and ending in ``then`` (what happens to the cell)."""
        try:
            with open(path, encoding="utf-8") as fh:
                rec = json.load(fh)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            problem = f"{type(exc).__name__}: {exc}"
        else:
            if isinstance(rec, dict):
                return rec
            problem = f"a JSON {type(rec).__name__}, not an object"
        print(f"run_all: corrupt cell file {path} ({problem}); {then}", file=sys.stderr)
        return None

    def read(self, key: str) -> dict | None:
        """The record of ``key``; None when absent or corrupt (so the cell is recomputed)."""
        path = self.record_path(key)
        if not path.is_file():
            return None
        return self._load(path, "recomputing")

    def records(self, keys: set[str] | None = None) -> list[dict]:
        """Stored records, all or those of ``keys``; corrupt files are reported and skipped
        (temporary files start with a dot and are never matched)."""
        out = []
        for path in sorted(self.dir.glob("[!.]*.json")):
            if keys is not None and path.stem not in keys:
                continue
            rec = self._load(path, "skipped")
            if rec is not None:
                out.append(rec)
        return out

    def is_done(self, key: str) -> bool:
        rec = self.read(key)
        return rec is not None and rec.get("status") == "ok"

    def scores(self, record: dict) -> pd.DataFrame | None:
        name = record.get("scores_file")
        if not name:
            return None
        path = self.dir / name
        return pd.read_parquet(path) if name.endswith(".parquet") else pd.read_csv(path)

    def write(self, record: dict, scores: pd.DataFrame | None) -> None:
        record = dict(record)
        if scores is not None and len(scores):
            if _has_parquet():
                name, buf = f"{record['key']}.scores.parquet", io.BytesIO()
                scores.to_parquet(buf, index=False)
                data = buf.getvalue()
            else:
                name = f"{record['key']}.scores.csv.gz"
                data = _gzip_csv(scores)
            write_atomic(self.dir / name, data)
            record["scores_file"] = name
        text = json.dumps(record, indent=1, sort_keys=True, default=str)
        write_atomic(self.record_path(record["key"]), text.encode("utf-8"))


def _gzip_csv(frame: pd.DataFrame) -> bytes:
    return gzip.compress(frame.to_csv(index=False).encode("utf-8"), mtime=0)


# -- worker side ---------------------------------------------------------------------------

class _LRU:
    """A tiny per-process cache: loaded datasets and sampled tasks, reused by later cells."""

    def __init__(self, size: int):
        self.size, self.items = size, OrderedDict()

    def get(self, key, make: Callable):
        if key in self.items:
            self.items.move_to_end(key)
            return self.items[key]
        value = make()
        self.items[key] = value
        if len(self.items) > self.size:
            self.items.popitem(last=False)
        return value


_DATA = _LRU(1)  # cells come ordered by dataset; one corpus in memory is enough
_TASKS = _LRU(2)


def _qualname(fn) -> str:
    return f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', repr(fn))}"


def _split_result(result: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    if not isinstance(result, pd.DataFrame):
        raise TypeError(f"protocol.evaluate returned {type(result).__name__}, "
                        f"expected a pandas DataFrame")
    scores = result.attrs.get("scores")
    if "y_score" in result.columns:
        is_score = result["y_score"].notna()
        item_rows = result.loc[is_score].dropna(axis=1, how="all")
        scores = item_rows if scores is None else pd.concat([scores, item_rows])
        result = result.loc[~is_score].drop(columns=[c for c in SCORE_COLUMNS
                                                     if c in result.columns])
    missing = [c for c in METRIC_COLUMNS if c not in result.columns]
    if missing:
        raise ValueError(f"protocol.evaluate result lacks column(s) {missing}; "
                         f"it has {list(result.columns)}")
    if scores is not None:
        scores = scores.drop(columns=[c for c in METRIC_COLUMNS if c in scores.columns
                                      and c != "group"]).reset_index(drop=True)
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


def execute_cell(cell: Cell, protocol, factory: Callable, loader: Callable,
                 options: MethodOptions, progress_dir: str | None = None
                 ) -> tuple[dict, pd.DataFrame | None]:
    """Run one cell; never raises for an ordinary error (the record says ``failed``).

    Returns the record (JSON-able dict) and the per-item scores (or None). With
    ``progress_dir``, progress inside the cell is written there (see :func:`_cell_progress`).
    """
    started = datetime.now(timezone.utc)
    record = {"key": cell.key, "spec": cell.spec(), "host": socket.gethostname(),
              "pid": os.getpid(), "started": started.isoformat()}
    t0 = time.perf_counter()
    scores = None
    stack = ExitStack()
    try:
        stack.enter_context(_cell_progress(cell, progress_dir))
        lkey = (_qualname(loader), cell.task_key[0], cell.task_key[1])
        data = _DATA.get(lkey, lambda: loader(cell.dataset, **dict(cell.load)))
        task = _TASKS.get((_qualname(loader), _qualname(type(protocol)), *cell.task_key),
                          lambda: protocol.sample(data, dict(cell.setting), int(cell.seed)))
        t1 = time.perf_counter()
        method = factory(int(cell.seed), options)
        result = protocol.evaluate(method, task)
        runtime = time.perf_counter() - t1
        rows, scores = _split_result(result)
        record.update(status="ok", rows=_jsonable_rows(rows), runtime=runtime,
                      task_seconds=t1 - t0, info=_safe_info(getattr(task, "info", {})))
    except Exception as exc:  # recorded, so one bad cell does not stop the grid
        tb = traceback.format_exc().rstrip().splitlines()
        record.update(status="failed", error=f"{type(exc).__name__}: {exc}",
                      traceback="\n".join(tb[-_TRACEBACK_LINES:]),
                      runtime=time.perf_counter() - t0)
    finally:
        stack.close()
    record["finished"] = datetime.now(timezone.utc).isoformat()
    return record, scores


def execute_task(cells: list[Cell], protocol, factories: list[Callable], loader: Callable,
                 options: MethodOptions, store_dir: str | None = None,
                 progress_dir: str | None = None) -> list[tuple[dict, pd.DataFrame | None]]:
    """Run the cells of one task in order (the task is sampled once, see ``_TASKS``).

    With ``store_dir`` each cell is stored there as soon as it finishes, so an interrupted
    task loses no finished cell; its record then says ``stored`` and its scores are not sent
    back. ``progress_dir``: see :func:`execute_cell`.
    """
    store = CellStore(store_dir) if store_dir is not None else None
    out = []
    for cell, factory in zip(cells, factories, strict=True):
        record, scores = execute_cell(cell, protocol, factory, loader, options, progress_dir)
        if store is not None:
            store.write(record, scores)
            record, scores = {**record, "stored": True}, None
        out.append((record, scores))
    return out


# -- client side ---------------------------------------------------------------------------

@dataclass
class RunSummary:
    """Counts of one ``run`` call: cells in the grid, found done, computed now, failed now,
    and left for later (``max_cells``)."""

    total: int
    already_done: int
    computed: int
    failed: int
    not_run: int
    seconds: float

    def __str__(self) -> str:
        return (f"{self.total} cells: {self.already_done} already done, {self.computed} computed "
                f"({self.failed} failed), {self.not_run} not run; {self.seconds:.1f} s")


def _loky_results(payloads: list[tuple], n_jobs: int) -> Iterable:
    from joblib import Parallel, delayed
    par = Parallel(n_jobs=n_jobs, backend="loky", return_as="generator_unordered",
                   batch_size=1)
    return par(delayed(execute_task)(*p) for p in payloads)


def dask_distributed():
    """The ``dask.distributed`` module, or RuntimeError saying what to install."""
    try:
        import dask.distributed
    except ImportError as exc:
        raise RuntimeError(f"--backend dask needs dask.distributed ({exc}): "
                           f"pip install 'stylo[dask]'") from exc
    return dask.distributed


def _dask_results(payloads: list[tuple], n_jobs: int, scheduler: str | None) -> Iterable:
    dd = dask_distributed()
    cluster = None
    if scheduler:
        client = dd.Client(scheduler)
    else:
        cluster = dd.LocalCluster(n_workers=max(1, n_jobs), threads_per_worker=1,
                                  host="127.0.0.1", dashboard_address=None,
                                  processes=True, silence_logs=40)
        client = dd.Client(cluster)
    try:
        futures = [client.submit(execute_task, *p, pure=False, key=f"task-{p[0][0].key}")
                   for p in payloads]
        try:
            for fut in dd.as_completed(futures):
                yield fut.result()
        finally:
            client.cancel(futures)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _factory(cell: Cell, methods: Mapping[str, MethodSpec], maskings: Mapping[str, Callable]
             ) -> Callable:
    factory = methods[cell.method].factory
    if cell.method_params:
        factory = WithParams(factory, cell.method_params)
    return factory if cell.masking is None else Masked(factory, maskings[cell.masking])


def run(cells: list[Cell], out_dir: str | Path, *, protocols: Mapping, loader: Callable,
        methods: Mapping[str, MethodSpec] = METHODS, options: MethodOptions = DEFAULT_OPTIONS,
        backend: str = "loky", n_jobs: int = 1, scheduler: str | None = None,
        max_cells: int | None = None, progress: bool = True,
        maskings: Mapping[str, Callable] = MASKINGS) -> RunSummary:
    """Compute every cell not already stored ``ok`` under ``out_dir`` and store it.

    ``protocols`` maps names to protocol objects, ``methods`` names to MethodSpecs,
    ``maskings`` names to verifier wrappers;
    ``loader(name, **load)`` loads a dataset. ``max_cells`` stops after that many cells (a
    rerun continues). KeyboardInterrupt stops the run; finished cells stay stored.
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
    todo = pending if max_cells is None else pending[:max(0, max_cells)]
    instances: dict = {}
    tasks: dict[tuple, list[Cell]] = {}
    for c in todo:
        tasks.setdefault(c.task_key, []).append(c)
    store_dir = None if backend == "dask" else str(out_dir)
    # progress inside cells travels through files, so only workers on this machine report it
    progress_dir = str(store.dir / ".progress") if progress and store_dir else None
    if progress_dir:
        # notes left by a run that was killed would show as live work
        shutil.rmtree(progress_dir, ignore_errors=True)
        Path(progress_dir).mkdir()
    payloads = []
    for group in tasks.values():
        pkey = group[0].task_key[2:4]
        if pkey not in instances:
            instances[pkey] = configured(protocols, group[0].protocol,
                                         group[0].protocol_params)
        payloads.append((group, instances[pkey], [_factory(c, methods, maskings) for c in group],
                         loader, options, store_dir, progress_dir))
    computed = failed = 0
    if payloads:
        results = (_dask_results(payloads, n_jobs, scheduler) if backend == "dask"
                   else _loky_results(payloads, n_jobs))
        from tqdm.auto import tqdm
        with tqdm(total=len(todo), unit="cell", disable=not progress,
                  desc="stylo grid") as bar, _showing_progress(bar, progress_dir):
            for task_results in results:
                for record, scores in task_results:
                    if not record.get("stored"):
                        store.write(record, scores)
                    computed += 1
                    failed += record["status"] != "ok"
                if failed:  # the postfix is the workers' progress, see _showing_progress
                    bar.set_description_str(f"stylo grid ({failed} failed)", refresh=False)
                bar.update(len(task_results))
    return RunSummary(total=len(unique), already_done=done_before, computed=computed,
                      failed=failed, not_run=len(pending) - len(todo),
                      seconds=time.perf_counter() - t0)


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
                count = f" {doc['stage']} {doc['done']:,}/{doc['total']:,}" if doc["total"] \
                    else ""
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
    return {"host": socket.gethostname(), "platform": platform.platform(),
            "python": platform.python_version(), "cpus": os.cpu_count()}
