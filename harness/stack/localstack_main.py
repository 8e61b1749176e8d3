"""Run LocalStack's runtime as ``python -m localstack.runtime.main`` does, its start-up heap frozen.

LocalStack keeps every AWS service model in memory. A full garbage
collection over that heap stops every request: 0.3 to 1.8 s on a busy
2-core machine (measured with ``gc.callbacks``), longer than the heartbeat
bounds the scenarios run at, so a live attempt looked dead. Once the runtime
is ready and its service index loaded, the heap is collected once and frozen
(``gc.freeze``): later full collections only walk what requests allocate.

Only the standard library and LocalStack are imported: the docker image runs
this module from the mounted harness package, in LocalStack's own venv.
"""
from __future__ import annotations

import gc
import runpy
import threading


def _freeze_once_ready() -> None:
    from localstack.runtime import events

    events.infra_ready.wait()
    from localstack.aws.spec import get_service_catalog

    get_service_catalog()  # loaded on the first request otherwise, after the freeze
    gc.collect()
    gc.freeze()


def main() -> None:
    threading.Thread(target=_freeze_once_ready, name="jobquake-gc-freeze", daemon=True).start()
    runpy.run_module("localstack.runtime.main", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
