package sim

// Auth is a data instance's one user (Memgraph's access control with a single user). Its
// String hides both fields, so a DataSpec printed in an error or a log never shows them.
type Auth struct {
	Username string
	Password string
	// WithoutReloadTLS: the user lacks the RELOAD_TLS privilege RELOAD … TLS needs
	// (src/query/frontend/semantic/required_privileges.cpp:196); it has every other privilege.
	WithoutReloadTLS bool
}

func (a *Auth) String() string { return "sim.Auth{<redacted>}" }

// GoString hides the fields from %#v as well.
func (a *Auth) GoString() string { return a.String() }

// Authenticate checks a Bolt client's credentials (the listener calls it for HELLO in Bolt 4
// and LOGON in Bolt 5; bolt.Authenticator). Coordinators ignore auth ("Ignoring auth on
// coordinators", Memgraph v3.12.0 src/communication/bolt/v1/states/init.hpp 119–124). A data
// instance takes the "basic" and "none" schemes only (init.hpp 145–159) and, with a user
// (DataSpec.Auth), exactly its credentials; without one, any (glue/SessionHL.cpp 286–316).
func (h *handler) Authenticate(scheme, principal, credentials string) bool {
	h.w.mu.Lock()
	defer h.w.mu.Unlock()
	if h.in.coord {
		return true
	}
	if scheme != "basic" && scheme != "none" {
		return false
	}
	a := h.in.dspec.Auth
	return a == nil || principal == a.Username && credentials == a.Password
}
