// Package register installs the collection's hooks; import it for its side effects.
package register

import "example.com/collection/pkg/hooks"

func init() { hooks.Register() }
