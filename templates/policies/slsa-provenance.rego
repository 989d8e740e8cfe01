# cosign verify-attestation --type slsaprovenance1 --policy slsa-provenance.rego --key cosign.pub IMAGE@DIGEST
#
# What a release or admission gate can require of an image that scheduler-build built, pushed and
# attested (`inv image.push --sign`): the SLSA v1 provenance, from this toolkit's recipe, pinning
# every input. cosign evaluates `data.signature.allow` (Rego v0) with the in-toto Statement as
# `input`; `violation` holds the reasons (`opa eval -d slsa-provenance.rego -i statement.json
# data.signature.violation` shows them). Shipped by scheduler-build (`inv image.policy`);
# copy it and add your own rules (a Kubernetes minor, your source repository) below.
package signature

default allow = false

allow {
	count(violation) == 0
}

build_definition := input.predicate.buildDefinition

dependencies := build_definition.resolvedDependencies

# cosign wraps the predicate it attests in an in-toto v0.1 Statement; v1 is the same layout.
statement_types := {"https://in-toto.io/Statement/v0.1", "https://in-toto.io/Statement/v1"}

violation["the statement is not an in-toto Statement"] {
	not statement_types[input._type]
}

violation["the predicate is not SLSA provenance v1"] {
	not input.predicateType == "https://slsa.dev/provenance/v1"
}

violation["the buildType is not scheduler-build's image recipe"] {
	not build_definition.buildType == "urn:scheduler-build:build-type:image:v1"
}

violation["the builder is not scheduler-build"] {
	not startswith(input.predicate.runDetails.builder.id, "pkg:pypi/scheduler-build@")
}

violation["the Kubernetes version is missing from the external parameters"] {
	not startswith(build_definition.externalParameters.kubernetesVersion, "v1.")
}

violation["k8s.io/kubernetes is not a resolved dependency at a released module version"] {
	count([d | d := dependencies[_]; d.name == "k8s.io/kubernetes"; startswith(d.uri, "pkg:golang/k8s.io/kubernetes@v1.")]) != 1
}

violation[msg] {
	d := dependencies[_]
	startswith(d.uri, "file:/")
	msg := sprintf("%s: an absolute path leaks the build machine (%s)", [d.name, d.uri])
}

violation[msg] {
	d := dependencies[_]
	not startswith(object.get(d, "uri", "pkg:"), "pkg:")
	not regex.match("^[0-9a-f]{64}$", object.get(object.get(d, "digest", {}), "sha256", ""))
	msg := sprintf("%s: a local source without its sha256", [d.name])
}

violation["the builder image is not pinned by digest"] {
	count([d | d := dependencies[_]; d.name == "builder-image"; regex.match("^[0-9a-f]{64}$", d.digest.sha256)]) != 1
}
