"""config: the KubeSchedulerConfiguration and manifests from a spec (render), their checks (validate), legacy Policy migration."""
