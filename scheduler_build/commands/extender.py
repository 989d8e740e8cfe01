"""extender: run the reference scheduler extender (HTTP, underlay-IP policy)."""

from invoke import Collection, task

from scheduler_build.errors import UserError
from scheduler_build.extender import ServeConfig, TLSOptions
from scheduler_build.extender import serve as serve_extender
from scheduler_build.extender.app import VERBS
from scheduler_build.extender.cli import validate
from scheduler_build.commands._common import describe, option, user_errors


@task(
    auto_shortflags=False,  # -h is help, never --host; a server task takes long flags only
    help={
        "host": f"listen address ({describe('extender.host')})",
        "port": f"listen port, 0 for a free one ({describe('extender.port')})",
        "kubeconfig": "kubeconfig for list/watch and bind "
                      f"({describe('extender.kubeconfig', '$KUBECONFIG, ~/.kube/config, in-cluster')})",
        "policy": f"placement policy ({describe('extender.policy')})",
        "url-prefix": f"path prefix of the verbs, the urlPrefix's path ({describe('extender.url_prefix')})",
        **{f"{verb}-verb": f"{verb} verb path, empty disables ({describe(f'extender.{verb}_verb')})" for verb in VERBS},
        "max-body-bytes": f"largest request body accepted ({describe('extender.max_body_bytes')})",
        "assume-ttl": f"seconds a pod bound here counts before the watch confirms it ({describe('extender.assume_ttl')})",
        "tls-cert": f"serve HTTPS with this PEM certificate ({describe('extender.tls_cert', 'plain HTTP')})",
        "tls-key": f"PEM private key of the certificate ({describe('extender.tls_key', 'in the cert file')})",
        "tls-client-ca": f"require client certificates signed by this CA, mTLS ({describe('extender.tls_client_ca', 'none')})",
        "log-level": f"debug, info, warning or error ({describe('extender.log_level')})",
    },
)
@user_errors
def serve(c, host=None, port=None, kubeconfig=None, policy=None, url_prefix=None, filter_verb=None,
          prioritize_verb=None, preempt_verb=None, bind_verb=None, max_body_bytes=None, assume_ttl=None,
          tls_cert=None, tls_key=None, tls_client_ca=None, log_level=None):
    """Serve the extender in the foreground until Ctrl-C: its verbs, probes and metrics.

    Verbs filter, prioritize, preempt and bind; /healthz, /readyz and /metrics. JSON logs on stderr."""
    def opt(key, flag):
        return option(c, f"extender.{key}", flag)

    config = validate(ServeConfig(
        host=opt("host", host), port=opt("port", port), kubeconfig=opt("kubeconfig", kubeconfig),
        policy=opt("policy", policy), url_prefix=opt("url_prefix", url_prefix),
        verbs={"filter": opt("filter_verb", filter_verb), "prioritize": opt("prioritize_verb", prioritize_verb),
               "preempt": opt("preempt_verb", preempt_verb), "bind": opt("bind_verb", bind_verb)},
        max_body_bytes=opt("max_body_bytes", max_body_bytes), assume_ttl=opt("assume_ttl", assume_ttl),
        tls=TLSOptions(opt("tls_cert", tls_cert), opt("tls_key", tls_key), opt("tls_client_ca", tls_client_ca)),
        log_level=opt("log_level", log_level),
    ))
    try:
        serve_extender(config)
    except OSError as exc:
        raise UserError(f"extender: cannot listen on {config.host}:{config.port}: {exc.strerror or exc}",
                        "pick another --port (0 for a free one) or --host") from None


ns = Collection("extender", serve)
