"""extender: run the reference scheduler extender (HTTP, underlay-IP policy)."""

from invoke import Collection, task

from scheduler_build.errors import UserError
from scheduler_build.inputs.extender import serve_inputs
from scheduler_build.commands._common import user_errors
from scheduler_build.settings import SETTINGS, flag_help


@task(
    auto_shortflags=False,  # -h is help, never --host; a server task takes long flags only
    help={
        **{row.flag_name[2:]: flag_help(row.key, before="turn off: " if row.flag_name.startswith("--no-") else "")
           for row in SETTINGS if row.key.startswith("extender.")},
    },
)
@user_errors
def serve(c, host=None, port=None, kubeconfig=None, policy=None, url_prefix=None, filter_verb=None,
          prioritize_verb=None, preempt_verb=None, bind_verb=None, max_body_bytes=None, assume_ttl=None,
          tls_cert=None, tls_key=None, tls_client_ca=None, log_level=None, no_one_write=False):
    """Serve the extender in the foreground until Ctrl-C: its verbs, probes and metrics.

    Verbs filter, prioritize, preempt and bind; /healthz, /readyz and /metrics. JSON logs on stderr."""
    from scheduler_build.extender.service import serve as serve_extender  # the stage, only when serving: `inv` starts fast
    from scheduler_build.extender.cli import validate

    config = validate(serve_inputs(
        c, host=host, port=port, kubeconfig=kubeconfig, policy=policy, url_prefix=url_prefix, filter_verb=filter_verb,
        prioritize_verb=prioritize_verb, preempt_verb=preempt_verb, bind_verb=bind_verb, max_body_bytes=max_body_bytes,
        assume_ttl=assume_ttl, tls_cert=tls_cert, tls_key=tls_key, tls_client_ca=tls_client_ca, log_level=log_level,
        no_one_write=no_one_write))
    try:
        serve_extender(config)
    except OSError as exc:
        raise UserError(f"extender: cannot listen on {config.host}:{config.port}: {exc.strerror or exc}",
                        "pick another --port (0 for a free one) or --host") from None


ns = Collection("extender", serve)
