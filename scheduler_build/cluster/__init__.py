"""cluster: a local control plane (etcd + kube-apiserver as supervised processes, its PKI) for deploy and e2e runs."""
