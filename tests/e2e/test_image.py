"""The scheduler's scratch image (inv image.build's path) schedules pods from a container.

The container uses host networking to reach the API server on 127.0.0.1 and runs as
the image ships it (non-root user, binary as entrypoint, read-only root filesystem).
"""

from __future__ import annotations

import pytest

from testkit import e2e
from testkit import kubeobjects as kobj

pytestmark = pytest.mark.timeout(900)


def test_scheduler_image_schedules_pods_from_a_container(control_plane, kube, namespace, nodes, built_scheduler,
                                                          tmp_path, unique):
    tag = e2e.scheduler_image(built_scheduler, tmp_path / "dist")
    ours = f"sb-image-{unique}"
    nodes([kobj.node_body(f"img-{unique}-{i}") for i in range(3)])
    config = e2e.scheduler_config(ours, control_plane.scheduler_kubeconfig, leader_elect=True,
                                  lease_namespace=namespace)
    run = e2e.start_scheduler_container(tag, config, tmp_path, f"img-{unique}", timeout=180)
    try:
        user = run.container.attrs["Config"]["User"]
        assert user.split(":")[0] == "65532", user
        assert run.container.attrs["HostConfig"]["NetworkMode"] == "host"
        kobj.create_pods(kube, namespace, [kobj.pod_body(f"p{i}", ours) for i in range(8)]
                        + [kobj.pod_body("not-ours", "default-scheduler")])
        placed = kobj.wait_bound(kube, namespace, 8, 180)
        assert "not-ours" not in placed
        reporters = set(kobj.wait_events(kube, namespace, "Scheduled", placed, 180).values())
        assert reporters == {ours}
    finally:
        run.stop()
    import docker.errors

    from testkit import docker_sdk

    with pytest.raises(docker.errors.NotFound):
        docker_sdk.client().containers.get(run.container.id)
    assert "Successfully bound pod to node" in run.log_text()
