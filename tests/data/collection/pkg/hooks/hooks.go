// Package hooks is state that a side-effect import fills in: NodeFree needs
// example.com/collection/pkg/hooks/register imported by the scheduler's main.
package hooks

var registered bool

// Register marks the hooks as installed (called by the register package's init).
func Register() { registered = true }

// Registered reports whether the register package was imported.
func Registered() bool { return registered }
