"""image: reproducible FROM-scratch images with SBOMs, pushed to a registry by digest."""

import dataclasses
import tempfile
from pathlib import Path

from invoke import Collection, task

from scheduler_build import owned, resources
from scheduler_build.atomic import write_atomic
from scheduler_build.build.info import sha256_file
from scheduler_build.errors import UserError
from scheduler_build.extender.config import IMAGE_REPOSITORY
from scheduler_build.flows import image as image_flow
from scheduler_build.flows import publishers
from scheduler_build.image import assemble as image_stage
from scheduler_build.image import extender as extender_image
from scheduler_build.image import provenance
from scheduler_build.image import request as image_request
from scheduler_build.platforms import host_arch  # not `platforms`: the tasks' --platforms flag has that name
from scheduler_build.progress import phase
from scheduler_build.publish import archive as archive_stage
from scheduler_build.publish import cosign as cosign_tool
from scheduler_build.publish import sign as sign_stage
from scheduler_build.publish import verify as verify_stage
from scheduler_build.inputs.image import image_inputs
from scheduler_build.inputs.publish import (DESTINATIONS, TO_HELP, build_destinations, cosign_inputs,
                                            extender_image_inputs, parse_to, push_destinations, public_key,
                                            registry_inputs)
from scheduler_build.settings import flag_help
from scheduler_build.commands._common import build_request, emit, emit_json, user_errors


def _request_for(c, planned: image_request.Plan) -> image_flow.RequestFor:
    """A missing platform's build reads the same builder.* and build.* settings as `inv build` (one home),
    decided here, before the flow runs: the flow only sets the platform."""
    opts = planned.opts
    decided = build_request(c, k8s_version=planned.requested, arch=host_arch(), component="kube-scheduler",
                            name=None if opts.debuggable else planned.name, dist=opts.dist_dir,
                            source_date_epoch=opts.source_date_epoch, spec=planned.spec, debuggable=opts.debuggable)
    return lambda arch: dataclasses.replace(decided, arch=arch)


def _plan(opts: image_request.Options) -> image_request.Plan:
    return image_request.plan(opts, host_arch())


COMMON_HELP = {
    "spec": flag_help("spec.path", after=": name, version, kubernetes.version, platforms, image.repository; "
                      "--no-spec or --k8s-version alone ask for a plain kube-scheduler"),
    "no-spec": "plain kube-scheduler images: no spec, even with spec.path set",
    "k8s-version": flag_help("k8s.version", after="; of the binaries under dist/", spec="kubernetes.version"),
    "platforms": flag_help("image.platforms", after=", e.g. linux/amd64,linux/arm64", spec="platforms"),
    "dist": flag_help("paths.dist_dir"),
    "name": flag_help("build.name", after="; also the image title", spec="name"),
    "version": flag_help("image.version", spec="version"),
    "repository": flag_help("image.repository", spec="image.repository"),
    "source-date-epoch": flag_help("build.source_date_epoch", after="; an image's creation time, else the binary's build date"),
}


@task(
    auto_shortflags=False,
    help={
        **COMMON_HELP,
        "force": flag_help("image.force"),
        "json": "print the result as JSON instead of one tag per line",
        "to": TO_HELP + "; valid here: daemon, archive=FILE (image.push publishes to a registry); default daemon",
        "oci-archive": "also write the whole layout (index, images, SBOMs, provenance) as one tar FILE, for air-gapped "
                       "transfer: the same as adding archive=FILE to --to",
        "debuggable": flag_help("build.debuggable", before="package the debuggable build (dist/<name>-debuggable, `build --debuggable`): "
                                "tag <k8s>-<version>-debug, label org.scheduler-build.debuggable; the build: "),
    },
)
@user_errors
def build(c, spec=None, no_spec=False, k8s_version=None, platforms=None, dist=None, name=None, version=None, repository=None,
          source_date_epoch=None, force=False, json=False, oci_archive=None, debuggable=False, to=None):
    """Assemble reproducible FROM-scratch images (one per platform), their SBOMs, provenance and an OCI index."""
    opts = image_inputs(c, spec=spec, no_spec=no_spec, k8s_version=k8s_version, platforms=platforms, dist=dist, name=name,
                  version=version, repository=repository, source_date_epoch=source_date_epoch, force=force,
                  debuggable=debuggable)
    owned.check_writable(opts.dist_dir, "--dist")  # every output checked before any work starts
    to_publisher = publishers.publishers(build_destinations(c, to, oci_archive, force=bool(force)))
    with phase("image.build"):
        planned = _plan(opts)
        request, result, _ = image_flow.package(planned, _request_for(c, planned), host_arch(), to_publisher)
    if json:
        emit_json(result.as_dict())
    else:
        emit("\n".join(f"{request.repository}:{tag}" for tag in result.tags))


@task(
    auto_shortflags=False,
    help={
        **COMMON_HELP,
        "registry": flag_help("registry.url", spec="image.repository (when it names a registry host)"),
        "retries": flag_help("push.retries"),
        "insecure": flag_help("push.insecure"),
        "ca-cert": flag_help("push.ca_cert"),
        "no-build": "push what dist/ holds; do not run image.build first",
        "json": "print the result as JSON instead of one repo@sha256:... line per manifest",
        "sign": "sign the index and every image and attest each image's SLSA provenance with cosign (offline, no tlog)",
        "key": flag_help("sign.key", after="; its password: $COSIGN_PASSWORD, else sign.password"),
        "from-archive": "push the layout an `image.build --oci-archive` tar holds (digests unchanged) instead of dist/",
        "to": TO_HELP + "; default registry",
    },
)
@user_errors
def push(c, registry=None, spec=None, no_spec=False, k8s_version=None, platforms=None, dist=None, name=None, version=None,
         repository=None, source_date_epoch=None, retries=None, insecure=False, ca_cert=None, no_build=False, json=False,
         sign=False, key=None, from_archive=None, to=None):
    """Push the image index, every platform image and both SBOMs; with --sign, sign and attest; print each by digest."""
    # Everything decided before any work: a bad --to, key, target or registry setting fails before a build or upload.
    requested = parse_to(to if to is not None else "registry", DESTINATIONS)
    planned = None
    if not from_archive:
        planned = _plan(image_inputs(c, spec=spec, no_spec=no_spec, k8s_version=k8s_version, platforms=platforms,
                                     dist=dist, name=name, version=version, repository=repository,
                                     source_date_epoch=source_date_epoch))  # one spec load, one resolve
    # In --to's order; the registry by the one precedence rule (inputs/publish.push_target: the spec's, if any).
    to_publisher = publishers.publishers(push_destinations(
        c, requested, spec=planned.spec if planned else None, registry=registry, ca_cert=ca_cert, insecure=insecure,
        retries=retries, sign=sign, key=key))
    if planned is None:
        with archive_stage.extracted(Path(from_archive)) as layout:
            pushed = image_flow.push(None, layout, None, host_arch(), to_publisher)
    else:
        layout = image_stage.layout_dir(planned.opts.dist_dir, planned.name, planned.version) if no_build else None
        pushed = image_flow.push(planned, layout, None if no_build else _request_for(c, planned), host_arch(), to_publisher)
    if json:
        emit_json(pushed.as_dict())
    else:
        emit("\n".join(pushed.references))


@task(
    help={
        "tag": flag_help("image.extender_tag", otherwise=f"{IMAGE_REPOSITORY}:<toolkit version>"),
        "mirror": flag_help("image.debian_mirror"),
        "force": "rebuild even when the tag exists on the same cached base",
    },
)
@user_errors
def extender(c, tag=None, mirror=None, force=False):
    """The reference extender's image: Python on a debootstrapped Debian base (cached, never pulled), non-root."""
    decided = extender_image_inputs(c, tag=tag, mirror=mirror)
    with phase("image.extender", decided.tag):
        result = extender_image.build(decided.cache_dir, decided.tag, host_arch(), bool(force), mirror=decided.mirror)
    emit(f"{result.tag}")


@task(auto_shortflags=False, help={"out": "directory to write cosign.key (encrypted) and cosign.pub into; "
                                          "the password: $COSIGN_PASSWORD, else sign.password",
                                   "allow-empty-password": "write the pair with an empty password (refused otherwise: "
                                                           "whoever reads cosign.key could sign)"})
@user_errors
def keygen(c, out, allow_empty_password=False):
    """A cosign key pair for image.push --sign and image.verify; an existing pair is never overwritten."""
    decided = cosign_inputs(c)
    if not decided.password and not allow_empty_password:
        raise UserError(f"image.keygen: no password for the private key ({cosign_tool.PASSWORD_ENV} and sign.password "
                        "are empty); nothing written",
                        f"set {cosign_tool.PASSWORD_ENV}, or pass --allow-empty-password to write it with an empty one")
    sign_stage.keygen_out_dir(out)  # a bad --out is refused before cosign is built
    with phase("image.keygen", out):
        private, public = sign_stage.keygen(publishers.cosign(decided), Path(out))
    emit(f"{private}\n{public}")


@task(
    auto_shortflags=False,
    help={
        "ref": "what to verify: HOST[:PORT]/REPO@sha256:... or HOST[:PORT]/REPO:TAG (an index or one image)",
        "key": flag_help("sign.public_key"),
        "insecure": flag_help("push.insecure"),
        "ca-cert": flag_help("push.ca_cert"),
        "json": "print the report as JSON (every check, ok or not)",
        "rebuild": "also rebuild from the recorded inputs (this checkout's spec, or --no-spec) in a temporary dist/ "
                   "and compare every platform image's digest: a reproducibility witness",
        "spec": flag_help("spec.path", before="with --rebuild: ", after="; its digest must be the recorded one"),
        "no-spec": "with --rebuild: the image was a plain kube-scheduler (no spec)",
        "version": flag_help("image.version", before="with --rebuild: ", spec="version"),
    },
)
@user_errors
def verify(c, ref, key=None, insecure=False, ca_cert=None, json=False, rebuild=False, spec=None, no_spec=False, version=None):
    """Check signatures, the SLSA provenance, both SBOM referrers and the labels of what a registry holds."""
    public = public_key(c, key)
    target, _ = verify_stage.split_reference(ref)
    client = dataclasses.replace(publishers.client(registry_inputs(c, target, ca_cert, insecure, None)), read_only=True)
    with phase("image.verify", ref):
        report = verify_stage.verify(publishers.cosign(cosign_inputs(c)), public, ref, client)
        if rebuild:
            _rebuild(c, report, spec, no_spec, version)
        if json:
            emit_json(report.as_dict())
        else:
            emit("\n".join(f"{'ok' if x.ok else 'FAIL'} {x.check} {x.subject}" for x in report.checks))
        if not report.ok:
            raise UserError(f"{ref} failed verification: " + "; ".join(report.failures()), "the checks are listed on stdout")


@task(help={"out": "write the policy to FILE (atomically) instead of stdout"})
@user_errors
def policy(c, out=None):
    """The shipped Rego policy for `cosign verify-attestation --type slsaprovenance1 --policy` (a release or admission gate)."""
    text = resources.policy()
    if out:
        write_atomic(Path(out), text)
        emit(str(out))
    else:
        emit(text.decode())


def _rebuild(c, report: verify_stage.Report, spec, no_spec, version) -> None:
    """Rebuild every verified platform image from its provenance's inputs and compare digests."""
    if not report.statements:
        report.add("rebuild", report.digest, False, "no verified provenance to rebuild from")
        return
    recorded = provenance.Recorded.from_statement(next(iter(report.statements.values())))
    with tempfile.TemporaryDirectory(prefix="scheduler-build-rebuild-") as dist:
        opts = image_inputs(c, spec=spec, no_spec=no_spec,
                      k8s_version=None if (spec or not no_spec) else recorded.kubernetes_version,
                      platforms=",".join(recorded.platforms), dist=dist, name=recorded.name, version=version,
                      source_date_epoch=str(recorded.binary_source_date_epoch), force=True)
        local = sha256_file(opts.spec.path) if opts.spec is not None else ""
        if recorded.spec_sha256 != local:
            raise UserError(f"--rebuild: the image was built from spec sha256 {recorded.spec_sha256 or '(none)'}, "
                            f"this checkout's {opts.spec.path if opts.spec else 'flags'} is {local or '(none)'}",
                            "check out the commit that was released, or pass --spec / --no-spec as it was built")
        with phase("image.rebuild", f"{','.join(recorded.platforms)} in {dist}"):
            planned = _plan(opts)
            image_flow.rebuild_and_compare(report, planned, _request_for(c, planned), recorded.source_date_epoch, host_arch())

ns = Collection("image", build, push, extender, keygen, verify, policy)
