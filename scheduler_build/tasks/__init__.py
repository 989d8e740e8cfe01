"""The product's invoke collections, one per stage; `scheduler-build` serves exactly these.

Developer tasks that need the checkout (test, e2e, bench.*) are added by the
repository's tasks.py, the way invoke's own tasks.py composes its collections.
"""

import sys
from pathlib import Path

if __name__ == "tasks":  # found by invoke from inside scheduler_build/: import this checkout's package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from invoke import Collection  # noqa: E402 - after the path fix above

from scheduler_build import settings  # noqa: E402
from scheduler_build.tasks._common import accept_spec_on_stdin, add_inverse_flags  # noqa: E402
from scheduler_build.tasks import (  # noqa: E402
    build, builder, clean, cluster, config, deploy, dev, doctor, extender, image, k8s, scaffold)


def namespace() -> Collection:
    ns = Collection()
    ns.add_task(doctor.doctor)
    ns.add_task(clean.clean)
    for collection in (k8s.ns, builder.ns, build.ns, cluster.ns, image.ns, scaffold.ns, config.ns, deploy.ns, dev.ns,
                       extender.ns):
        ns.add_collection(collection)
    ns.configure(settings.invoke_defaults())
    for task in _every_task(ns):
        add_inverse_flags(task)
        accept_spec_on_stdin(task)
    return ns


def _every_task(collection: Collection):
    yield from collection.tasks.values()
    for sub in collection.collections.values():
        yield from _every_task(sub)


if __name__ == "tasks":
    # invoke, run from inside scheduler_build/, found this package as "tasks": serve the
    # checkout's own tasks.py instead of failing on imports (see checkout_tasks.py).
    from scheduler_build.checkout_tasks import checkout_namespace

    ns = checkout_namespace()
