// Command intoto-validate checks in-toto Statements with the in-toto attestation
// framework's own Go bindings: each file (one JSON Statement) is decoded strictly
// (unknown fields are errors), then Statement.Validate runs; a SLSA v1 predicate is
// decoded strictly as a Provenance and Provenance.Validate runs. One line per file;
// exit 1 when any file fails. Built by testkit/gotools.py, once per cache key.
package main

import (
	"fmt"
	"os"

	prov "github.com/in-toto/attestation/go/predicates/provenance/v1"
	ita "github.com/in-toto/attestation/go/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

const slsaProvenanceV1 = "https://slsa.dev/provenance/v1"

func check(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var st ita.Statement
	if err := protojson.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("statement: %w", err)
	}
	if err := st.Validate(); err != nil {
		return fmt.Errorf("Statement.Validate: %w", err)
	}
	if st.GetPredicateType() != slsaProvenanceV1 {
		return nil
	}
	raw, err := protojson.Marshal(st.GetPredicate())
	if err != nil {
		return err
	}
	var p prov.Provenance
	if err := protojson.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("provenance: %w", err)
	}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("Provenance.Validate: %w", err)
	}
	return nil
}

func main() {
	failed := false
	for _, path := range os.Args[1:] {
		if err := check(path); err != nil {
			fmt.Printf("FAIL %s: %v\n", path, err)
			failed = true
		} else {
			fmt.Printf("ok %s\n", path)
		}
	}
	if failed || len(os.Args) < 2 {
		os.Exit(1)
	}
}
