"""Where a campaign's tasks run: this process, a local Dask cluster, or a running one.

:func:`open_runner` gives a runner for :func:`tspcl.campaign.run_tasks`:

* neither ``cluster`` nor ``scheduler``: :class:`~tspcl.campaign.SerialRunner`, the
  tasks one after another in this process on ``device``;
* ``cluster="local"``: a Dask cluster on this machine, one worker process per OpenCL
  device (the GPUs, else every device; ``device`` names one), each pinned to its device
  by ``$TSPCL_DEVICE`` (``P:D``) set in its environment; ``workers=N`` starts N workers,
  given the devices in turn (N workers on one device where one is named or found);
* ``scheduler="tcp://HOST:PORT"``: a running Dask cluster.  Start one worker process
  per device, one thread each, pinned by ``$TSPCL_DEVICE``, on each machine::

      DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION=1.0 dask scheduler   # tcp://HOST:8786
      TSPCL_DEVICE=0:0 dask worker tcp://HOST:8786 --nworkers 1 --nthreads 1 &
      TSPCL_DEVICE=0:1 dask worker tcp://HOST:8786 --nworkers 1 --nthreads 1 &

  (``tspcl devices`` lists the P:D numbers; a worker without ``$TSPCL_DEVICE`` takes
  the ``device`` given here, else auto).  Every worker needs this version of tspcl.

Dask is imported only here, when a cluster is asked for.  Each task runs in a worker
process that keeps its :class:`~tspcl.device.Runtime` (kernels built once per worker).
Faults: a task whose worker dies (killed, out of memory, a driver reset) is run again on
a live worker; after :data:`ALLOWED_FAILURES` such deaths it fails (``KilledWorker``,
the local cluster's setting; a running cluster's scheduler has its own,
``distributed.scheduler.allowed-failures``, 3 by default).  A death counts against every
task the worker holds, so the runner keeps only as many tasks in the cluster as it has
workers, and a local cluster's scheduler gives a worker one at a time even while a dead
one is replaced (``worker-saturation`` 1.0; for a running cluster start the scheduler
with ``DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION=1.0``).  A finished task whose
worker dies before its result is read runs again.  A task that raises is tried
:data:`RETRIES` more time(s), then fails with the exception's first line.  Failed tasks
become failed entries, never the end of the campaign.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager

from .campaign import FAILED, OK, Entry, SerialRunner, failure_reason
from .device import DEVICE_ENV
from .errors import UsageError

INSTALL_HINT = "pip install 'tspcl[cluster]'"
ALLOWED_FAILURES = 2   # worker deaths a task survives on the local cluster (the 3rd fails it)
RETRIES = 1            # further tries of a task that raised


class DaskRunner:
    """Runs tasks on a Dask cluster and yields the entries as they finish; the client
    comes from ``connect()`` when there is a first task to run.  ``workers``: how
    many a local cluster has (None: a running cluster's, not known here)."""

    def __init__(self, connect: Callable[[], object], description: str, device: str | None,
                 workers: int | None = None):
        self.connect = connect
        self.client = None
        self.description = description
        self.device = device   # what tasks carry as their device (None: the worker's)
        self.workers = workers

    def worker_count(self) -> int:
        """The cluster's workers: a local cluster's count, else those connected now (the
        client made here if need be; at least 1)."""
        if self.workers is not None:
            return self.workers
        if self.client is None:
            self.client = self.connect()
        return max(1, len(self.client.scheduler_info()["workers"]))

    def run(self, tasks: Sequence, execute: Callable[[object], dict]) -> Iterator[Entry]:
        """Runs the tasks, as many at once as the cluster has workers: a worker's death
        counts against every task it holds (Dask sends a worker more tasks than it has
        threads), so each holds only the one it runs."""
        from distributed import as_completed

        if not tasks:
            return
        if self.client is None:
            self.client = self.connect()
        waiting = iter(tasks)
        futures = {}
        running = as_completed()

        def fill() -> None:  # a task for each worker that has none
            workers = self.worker_count()   # a running cluster's: one call to its scheduler
            while len(futures) < workers:
                task = next(waiting, None)
                if task is None:
                    return
                key = "tspcl-" + hashlib.sha256(task.key.encode()).hexdigest()[:32]
                future = self.client.submit(execute, task, key=key, retries=RETRIES)
                futures[future] = task
                running.add(future)

        fill()
        try:
            for future in running:
                task = futures.pop(future)
                entry = settled_entry(task, future)
                fill()
                yield entry
                future.release()
        finally:
            if futures:  # stopped early: nothing left may run
                self.client.cancel(list(futures))


def settled_entry(task, future) -> Entry:
    """The entry of a task whose future ``as_completed`` gave.  ``result()``, not the
    status, decides: a finished task whose worker died before its result was read is
    "lost" until the scheduler has run it again, and ``result()`` waits for that."""
    from distributed.scheduler import KilledWorker

    try:
        return Entry(task.key, OK, future.result())
    except KilledWorker:
        return Entry(task.key, FAILED,
                     reason=f"KilledWorker: its worker died {ALLOWED_FAILURES + 1} times")
    except Exception as error:
        return Entry(task.key, FAILED, reason=failure_reason(error))


def dask_setup(worker) -> None:
    """Run by each local worker process as it starts (Dask's ``preload``): Ctrl-C on the
    terminal, which signals every process of the foreground group, leaves the workers
    alone; the campaign's process stops and closes the cluster."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def dask_modules():
    """distributed's Client, Nanny, Scheduler and SpecCluster; UsageError without Dask."""
    try:
        from distributed import Client, Nanny, Scheduler, SpecCluster
    except ImportError:
        raise UsageError(f"--cluster and --scheduler need Dask: {INSTALL_HINT}") from None
    return Client, Nanny, Scheduler, SpecCluster


def local_devices(device: str | None) -> list[str]:
    """The device specs of a local cluster's workers: ``[device]`` where one is named,
    else every GPU's ``P:D``, else every device's."""
    if device:
        return [device]
    from .device import _cl, is_gpu

    cl = _cl()
    try:
        platforms = cl.get_platforms()
    except cl.Error:
        platforms = []
    found = []
    for p, platform in enumerate(platforms):
        try:
            found += [(f"{p}:{d}", is_gpu(dev)) for d, dev in enumerate(platform.get_devices())]
        except cl.Error:
            continue
    gpus = [spec for spec, gpu in found if gpu]
    return gpus or [spec for spec, _ in found] or ["auto"]


@contextmanager
def open_runner(cluster: str | None, scheduler: str | None, workers: int | None,
                device: str | None):
    """The runner (see the module docstring).  A cluster is started, or reached, when
    the first task is submitted, and closed on exit."""
    if cluster is None and scheduler is None:
        if workers is not None:
            raise UsageError("--workers needs --cluster local")
        from .campaign import process_runtime

        yield SerialRunner(device, f"device {process_runtime(device).name}")
        return
    if cluster is not None and scheduler is not None:
        raise UsageError("give --cluster local or --scheduler ADDRESS, not both")
    if cluster is not None and cluster != "local":
        raise UsageError(f"--cluster takes local (got {cluster!r}); for a running "
                         "cluster give --scheduler tcp://HOST:PORT")
    if workers is not None and scheduler is not None:
        raise UsageError("--workers is for --cluster local (a running cluster has its own)")
    if workers is not None and workers < 1:
        raise UsageError(f"--workers takes a count from 1 (got {workers})")
    client_type, nanny, scheduler_type, spec_cluster = dask_modules()
    with ExitStack() as started:
        if scheduler is not None:
            def connect():
                try:
                    return started.enter_context(client_type(scheduler, timeout="30s"))
                except (OSError, TimeoutError) as e:
                    raise UsageError(f"--scheduler {scheduler}: cannot reach it ({e})") from None

            yield DaskRunner(connect, f"the Dask cluster at {scheduler}", device)
            return
        devices = local_devices(device)
        count = workers or len(devices)
        quiet = logging.CRITICAL  # a task's failure is its row's reason, not a worker's log
        specs = {f"tspcl-{i}": {"cls": nanny, "options": {
            "nthreads": 1, "env": {DEVICE_ENV: devices[i % len(devices)]}, "memory_limit": 0,
            "host": "127.0.0.1", "silence_logs": quiet, "preload": [__name__]}}
            for i in range(count)}

        def connect():
            import dask

            # a worker holds only the task it runs (Dask's default sends a one-thread
            # worker two): a worker's death counts against every task it holds, so a
            # task queued behind one that kills its worker would fail with it
            with dask.config.set({"distributed.scheduler.worker-saturation": 1.0}):
                local = started.enter_context(spec_cluster(
                    workers=specs, silence_logs=quiet, scheduler={
                        "cls": scheduler_type, "options": {
                            "host": "127.0.0.1", "dashboard_address": "127.0.0.1:0",
                            "allowed_failures": ALLOWED_FAILURES}}))
            return started.enter_context(client_type(local))

        used = ", ".join(dict.fromkeys(devices[i % len(devices)] for i in range(count)))
        yield DaskRunner(connect, f"a local Dask cluster of {count} worker"
                                  f"{'s' if count > 1 else ''} (devices {used})", None,
                         workers=count)


__all__ = [
    "ALLOWED_FAILURES",
    "INSTALL_HINT",
    "RETRIES",
    "DaskRunner",
    "local_devices",
    "open_runner",
]
