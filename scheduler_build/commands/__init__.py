"""The product's invoke collections, one per stage; `scheduler-build` serves exactly these.

Developer tasks that need the checkout (test, e2e, bench.*) are added by the
repository's tasks.py, the way invoke's own tasks.py composes its collections.
"""

from invoke import Collection

from scheduler_build import settings
from scheduler_build.commands._common import accept_spec_on_stdin, add_inverse_flags
from scheduler_build.commands import (
    build, builder, clean, cluster, compare, config, deploy, dev, doctor, explain, extender, image, init, k8s, plugin, release,
    scaffold)


def namespace() -> Collection:
    ns = Collection()
    ns.add_task(doctor.doctor)
    ns.add_task(clean.clean)
    ns.add_task(init.init)
    ns.add_task(explain.explain)
    ns.add_task(compare.compare)
    for collection in (k8s.ns, builder.ns, build.ns, cluster.ns, image.ns, scaffold.ns, plugin.ns, config.ns, deploy.ns, dev.ns,
                       extender.ns, release.ns, compare.ns):
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
