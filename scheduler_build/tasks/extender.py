"""extender: run the reference scheduler extender (HTTP, underlay-IP policy)."""

from invoke import Collection, task

from scheduler_build import settings
from scheduler_build.extender import ServeConfig, TLSOptions
from scheduler_build.extender import serve as serve_extender
from scheduler_build.extender.cli import validate
from scheduler_build.tasks._common import user_errors


@task(
    help={
        "host": "listen address (default: extender.host = 127.0.0.1)",
        "port": "listen port, 0 for a free one (default: extender.port = 8888)",
        "kubeconfig": "kubeconfig for list/watch and bind (default: extender.kubeconfig, "
                      "else $KUBECONFIG, ~/.kube/config, in-cluster)",
        "policy": "placement policy (default: extender.policy = underlay-ip)",
        "url-prefix": "path prefix of the verbs, the urlPrefix's path (default: extender.url_prefix = /)",
        "filter-verb": "filter verb path, empty disables (default: extender.filter_verb = filter)",
        "prioritize-verb": "prioritize verb path, empty disables (default: extender.prioritize_verb = prioritize)",
        "preempt-verb": "preempt verb path, empty disables (default: extender.preempt_verb = preempt)",
        "bind-verb": "bind verb path, empty disables (default: extender.bind_verb = bind)",
        "max-body-bytes": "largest request body accepted (default: extender.max_body_bytes = 64 MiB)",
        "assume-ttl": "seconds a pod bound here counts before the watch confirms it (default: extender.assume_ttl = 30)",
        "tls-cert": "serve HTTPS with this PEM certificate (default: extender.tls_cert)",
        "tls-key": "PEM private key of the certificate (default: extender.tls_key)",
        "tls-client-ca": "require client certificates signed by this CA, mTLS (default: extender.tls_client_ca)",
        "log-level": "debug, info, warning or error (default: extender.log_level = info)",
    },
)
@user_errors
def serve(c, host=None, port=None, kubeconfig=None, policy=None, url_prefix=None, filter_verb=None,
          prioritize_verb=None, preempt_verb=None, bind_verb=None, max_body_bytes=None, assume_ttl=None,
          tls_cert=None, tls_key=None, tls_client_ca=None, log_level=None):
    """Serve the extender in the foreground until Ctrl-C: filter, prioritize, preempt, bind,
    /healthz, /readyz and /metrics. JSON logs on stderr."""
    cfg = c.config

    def opt(key, flag):
        return settings.get(cfg, f"extender.{key}", flag)

    config = validate(ServeConfig(
        host=opt("host", host), port=int(opt("port", port)), kubeconfig=opt("kubeconfig", kubeconfig),
        policy=opt("policy", policy), url_prefix=opt("url_prefix", url_prefix),
        verbs={"filter": opt("filter_verb", filter_verb), "prioritize": opt("prioritize_verb", prioritize_verb),
               "preempt": opt("preempt_verb", preempt_verb), "bind": opt("bind_verb", bind_verb)},
        max_body_bytes=int(opt("max_body_bytes", max_body_bytes)), assume_ttl=float(opt("assume_ttl", assume_ttl)),
        tls=TLSOptions(opt("tls_cert", tls_cert), opt("tls_key", tls_key), opt("tls_client_ca", tls_client_ca)),
        log_level=opt("log_level", log_level),
    ))
    try:
        serve_extender(config)
    except OSError as exc:
        from scheduler_build.errors import UserError

        raise UserError(f"extender: cannot listen on {config.host}:{config.port}: {exc.strerror or exc}",
                        "pick another --port (0 for a free one) or --host") from None


ns = Collection("extender", serve)
