package memgraph

import (
	"fmt"
	"net"
	"sort"
	"strings"
)

// IdentityResolver dials every address as advertised (the in-cluster default).
type IdentityResolver struct{}

// Resolve returns address unchanged.
func (IdentityResolver) Resolve(address string) string { return address }

// ResolverFunc adapts a function to Resolver (a simulator's World.Resolve, for example).
type ResolverFunc func(address string) string

// Resolve calls f.
func (f ResolverFunc) Resolve(address string) string { return f(address) }

// StaticResolver maps advertised "host:port" addresses to the ones to dial; addresses it does
// not know are dialed as advertised. It is the value behind the --resolve flag, for running the
// hook outside the cluster against port-forwarded coordinators:
//
//	kubectl port-forward pod/memgraph-coordinator-1-0 17687:7687 &
//	memgraph-hooks --resolve memgraph-coordinator-1.db.svc.cluster.local:7687=127.0.0.1:17687
//
// The flag may repeat, once per coordinator. StaticResolver implements flag.Value, so
// flag.Var(StaticResolver{}, "resolve", …) collects the pairs; the map must be non-nil.
type StaticResolver map[string]string

// Resolve returns the mapped address, or address itself when there is no mapping.
func (s StaticResolver) Resolve(address string) string {
	if to, ok := s[address]; ok {
		return to
	}
	return address
}

// Set adds one "from=to" pair (flag.Value).
func (s StaticResolver) Set(value string) error {
	from, to, err := ParseResolveFlag(value)
	if err != nil {
		return err
	}
	if prev, ok := s[from]; ok && prev != to {
		return fmt.Errorf("--resolve %s given twice (%s and %s)", from, prev, to)
	}
	s[from] = to
	return nil
}

// String lists the pairs sorted by advertised address (flag.Value).
func (s StaticResolver) String() string {
	pairs := make([]string, 0, len(s))
	for from, to := range s {
		pairs = append(pairs, from+"="+to)
	}
	sort.Strings(pairs)
	return strings.Join(pairs, ",")
}

// ParseResolveFlag splits a --resolve value "advertised-host:port=dial-host:port", for example
// "memgraph-coordinator-1.db.svc.cluster.local:7687=127.0.0.1:17687". Both sides must be
// host:port (the dial side may be a bracketed IPv6 literal).
func ParseResolveFlag(value string) (from, to string, err error) {
	from, to, ok := strings.Cut(strings.TrimSpace(value), "=")
	if !ok {
		return "", "", fmt.Errorf("--resolve %q: want advertised-host:port=dial-host:port", value)
	}
	for _, side := range []string{from, to} {
		host, port, err := net.SplitHostPort(side)
		if err != nil || host == "" || port == "" {
			return "", "", fmt.Errorf("--resolve %q: %q is not host:port", value, side)
		}
	}
	return from, to, nil
}
