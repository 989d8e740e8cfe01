"""The invoke collections, one per concern; tasks.py and the console script compose them."""

from invoke import Collection

from .. import settings
from . import build, builder, dev, k8s


def namespace() -> Collection:
    ns = Collection()
    ns.add_task(dev.doctor)
    ns.add_task(dev.test)
    ns.add_collection(k8s.ns)
    ns.add_collection(builder.ns)
    ns.add_collection(build.ns)
    from . import cluster
    ns.add_collection(cluster.ns)
    from . import image
    ns.add_collection(image.ns)
    from . import scaffold
    ns.add_collection(scaffold.ns)
    from . import config, deploy
    ns.add_collection(config.ns)
    ns.add_task(deploy.deploy)
    from . import bench
    ns.add_collection(bench.ns)
    from . import extender
    ns.add_collection(extender.ns)
    from . import e2e
    ns.add_collection(e2e.ns)
    ns.configure(settings.DEFAULTS)
    return ns
