"""`scheduler-extender` / `python -m scheduler_build.extender`: run the extender.

The same options as `inv extender.serve`, for containers and process supervisors
(the end-to-end tests start it this way). This program's own front door: it reads its flags and
environment ($KUBECONFIG, the one-write switch) once, into a ServeConfig, as inputs/extender.py
does for `inv extender.serve` (the extender image runs no settings or invoke).
"""

from __future__ import annotations

import argparse
import os
import ssl
import sys

from scheduler_build.cli.about import version_line
from scheduler_build.errors import UserError
from scheduler_build.extender.service import serve
from scheduler_build.extender.policy import POLICIES
from scheduler_build.extender.config import (LOG_LEVELS, ONE_WRITE_ENV, VERBS, ServeConfig, TLSOptions,
                                              default_kubeconfig, one_write_default)


def mib(size: int) -> str:
    return f"{size // (1024 * 1024)} MiB" if size % (1024 * 1024) == 0 else f"{size} bytes"


def parser() -> argparse.ArgumentParser:
    d = ServeConfig()  # the one home of the defaults
    p = argparse.ArgumentParser(prog="scheduler-extender",
                                description="A kube-scheduler HTTP extender with the underlay-IP policy.")
    p.add_argument("--version", action="version", version=version_line("scheduler-extender"))
    p.add_argument("--host", default=d.host, help=f"listen address (default {d.host})")
    p.add_argument("--port", type=int, default=d.port, help=f"listen port, 0 for a free one (default {d.port})")
    p.add_argument("--kubeconfig", default=d.kubeconfig, help="kubeconfig for list/watch and bind "
                   "(default: $KUBECONFIG, ~/.kube/config, else in-cluster)")
    p.add_argument("--policy", default=d.policy, choices=sorted(POLICIES), help=f"placement policy (default {d.policy})")
    p.add_argument("--url-prefix", default=d.url_prefix,
                   help=f"path prefix of the verbs, as in urlPrefix (default {d.url_prefix})")
    for verb in VERBS:
        p.add_argument(f"--{verb}-verb", default=d.verbs[verb], help=f"path of the {verb} verb under the prefix; "
                       f"empty disables it (default {d.verbs[verb]})")
    p.add_argument("--max-body-bytes", type=int, default=d.max_body_bytes,
                   help=f"largest request body accepted (default {mib(d.max_body_bytes)})")
    p.add_argument("--assume-ttl", type=float, default=d.assume_ttl,
                   help=f"seconds a pod this extender bound counts before the watch confirms it (default {d.assume_ttl:g})")
    p.add_argument("--tls-cert", default=d.tls.cert_file, help="serve HTTPS with this certificate (PEM)")
    p.add_argument("--tls-key", default=d.tls.key_file, help="private key of --tls-cert (PEM)")
    p.add_argument("--tls-client-ca", default=d.tls.client_ca_file,
                   help="require client certificates signed by this CA (mTLS)")
    p.add_argument("--health-port", type=int, default=d.health_port,
                   help="also serve /healthz and /readyz in plain HTTP on this port, for probes that "
                   "cannot present a client certificate (default: off)")
    p.add_argument("--log-level", default=d.log_level, choices=LOG_LEVELS,
                   help=f"log level of the JSON logs on stderr (default {d.log_level})")
    p.add_argument("--one-write", action=argparse.BooleanOptionalAction, default=one_write_default(os.environ),
                   help=f"send each response's head and body in one write; --no-one-write serves with plain httptools "
                   f"(default on unless ${ONE_WRITE_ENV}=0)")
    return p


def config_from(ns: argparse.Namespace) -> ServeConfig:
    return validate(ServeConfig(
        host=ns.host, port=ns.port,
        kubeconfig=ns.kubeconfig or default_kubeconfig(os.environ, os.path.expanduser("~")),
        policy=ns.policy, url_prefix=ns.url_prefix,
        verbs={v: getattr(ns, f"{v}_verb") for v in VERBS},
        max_body_bytes=ns.max_body_bytes, assume_ttl=ns.assume_ttl,
        tls=TLSOptions(ns.tls_cert, ns.tls_key, ns.tls_client_ca), log_level=ns.log_level,
        health_port=ns.health_port, one_write=ns.one_write))


def validate(cfg: ServeConfig) -> ServeConfig:
    """Reject settings that cannot work, naming the flag/config key at fault."""
    if cfg.policy not in POLICIES:
        raise UserError(f"extender.policy: unknown policy {cfg.policy!r}", f"known: {', '.join(sorted(POLICIES))}")
    if cfg.log_level not in LOG_LEVELS:
        raise UserError(f"extender.log_level: {cfg.log_level!r} is not a log level", f"use one of {', '.join(LOG_LEVELS)}")
    if not 0 <= cfg.port <= 65535:
        raise UserError(f"extender.port: {cfg.port} is not a TCP port", "use 0..65535 (0 picks a free port)")
    if not 0 <= cfg.health_port <= 65535 or (cfg.health_port and cfg.health_port == cfg.port):
        raise UserError(f"--health-port {cfg.health_port} is not a TCP port of its own",
                        "use 1..65535, other than --port (0 turns it off)")
    if cfg.max_body_bytes < 1024:
        raise UserError(f"extender.max_body_bytes: {cfg.max_body_bytes} is too small",
                        f"NodeLists of thousands of nodes are megabytes; keep the default {mib(ServeConfig().max_body_bytes)} or more")
    if cfg.assume_ttl <= 0:
        raise UserError(f"extender.assume_ttl: {cfg.assume_ttl} must be positive", "e.g. 30 (seconds)")
    if cfg.kubeconfig and not os.path.isfile(cfg.kubeconfig):
        raise UserError(f"extender.kubeconfig: {cfg.kubeconfig} does not exist", "pass a kubeconfig file path")
    tls = cfg.tls
    if (tls.key_file or tls.client_ca_file) and not tls.cert_file:
        raise UserError("extender.tls_key/tls_client_ca given without extender.tls_cert",
                        "HTTPS needs --tls-cert (and --tls-key unless the cert file holds the key)")
    for key, path in (("tls_cert", tls.cert_file), ("tls_key", tls.key_file), ("tls_client_ca", tls.client_ca_file)):
        if path and not os.path.isfile(path):
            raise UserError(f"extender.{key}: {path} does not exist", "pass a PEM file path")
    if tls.cert_file:
        try:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(tls.cert_file, tls.key_file or None)
            if tls.client_ca_file:
                ctx.load_verify_locations(tls.client_ca_file)
        except (ssl.SSLError, OSError) as exc:
            raise UserError(f"extender.tls_cert/tls_key: cannot load {tls.cert_file}: {exc}",
                            "give a PEM certificate and its matching private key") from None
    prefix = cfg.url_prefix
    if not prefix.startswith("/") or any(ch.isspace() or ch in "?#" for ch in prefix):
        raise UserError(f"extender.url_prefix: {prefix!r} is not a URL path", "e.g. / or /scheduler (the urlPrefix's path)")
    for verb, path in cfg.verbs.items():
        if path and (path.startswith("http") or " " in path):
            raise UserError(f"extender.{verb}_verb: {path!r} is not a URL path segment", "e.g. filter or v1/filter")
    return cfg


def main(argv: list[str] | None = None) -> None:
    try:
        cfg = config_from(parser().parse_args(argv))
        serve(cfg)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
