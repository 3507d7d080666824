// Command memgraph-hooks-secrets writes the two Secrets the default install (manifests/) needs,
// as YAML for kubectl apply, for clusters without cert-manager:
//
//	go run ./cmd/memgraph-hooks-secrets | kubectl apply -f -
//
// memgraph-hooks-tls (kubernetes.io/tls) holds the hook's serving certificate for its Service
// and, as ca.crt, the CA that Metacontroller verifies it with (the CompositeController's
// endpointConfigs caBundle). memgraph-hooks-token holds the bearer token Metacontroller sends
// (endpointConfigs authorization, key token) and the tokens the hook accepts (--auth-token-file,
// key accepted-tokens, one per line): the same token, until a rotation lists two.
//
// The CA's private key signs the serving certificate and is then forgotten: it is never written,
// so nothing else can ever be signed with it.
//
// Run again, it keeps what it made: it reads the Secrets through the kubeconfig, as kubectl does,
// and writes each one that exists back as it is, so the pipeline above changes nothing and
// Metacontroller, which reads the CA and the token only when it starts, keeps working. A Secret
// that exists but cannot serve (a key missing, a certificate expired or not for the Service) is
// refused. --rotate writes new Secrets without reading the cluster (then restart Metacontroller:
// docs/security.md, "Rotating").
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/internal/version"
)

type options struct {
	namespace, service, clusterDomain string
	tlsSecret, tokenSecret            string
	clientTLSSecret                   string
	clientTLS                         bool
	validFor                          time.Duration
	only                              string
	rotate                            bool
	kubeconfig, context               string
}

// errVersion is parseFlags' answer to --version, which it has printed.
var errVersion = errors.New("version printed")

func main() {
	o, err := parseFlags(os.Args[1:], os.Stdout)
	os.Exit(exitCode(err, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var read secretReader
		if !o.rotate {
			read = o.clusterReader
		}
		return run(ctx, o, read, os.Stdout, os.Stderr)
	}))
}

// exitCode reports the outcome on stderr and returns the exit code: 0 after --help, --version or
// a run that wrote the Secrets; 2 for a command line that cannot run; 1 for a failure while
// running (the cluster could not be read, a Secret that exists is refused).
func exitCode(parseErr error, run func() error) int {
	switch {
	case errors.Is(parseErr, flag.ErrHelp), errors.Is(parseErr, errVersion):
		return 0
	case parseErr != nil:
		fmt.Fprintf(os.Stderr, "memgraph-hooks-secrets: %v\nRun memgraph-hooks-secrets --help to list the flags.\n", parseErr)
		return 2
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "memgraph-hooks-secrets:", err)
		return 1
	}
	return 0
}

// parseFlags parses and checks the command line; --help and --version print to out.
func parseFlags(args []string, out io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("memgraph-hooks-secrets", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVar(&o.namespace, "namespace", "memgraph-hooks", "namespace of the hook's Service and of the Secrets")
	fs.StringVar(&o.service, "service", "memgraph-hooks", "name of the hook's Service (the certificate is for <service>.<namespace>[.svc[.<cluster-domain>]])")
	fs.StringVar(&o.clusterDomain, "cluster-domain", "cluster.local", "the cluster's DNS domain")
	fs.StringVar(&o.tlsSecret, "tls-secret", "memgraph-hooks-tls", "name of the kubernetes.io/tls Secret")
	fs.StringVar(&o.tokenSecret, "token-secret", "memgraph-hooks-token", "name of the token Secret")
	fs.DurationVar(&o.validFor, "valid-for", 365*24*time.Hour, "how long a new CA and serving certificate are valid")
	fs.BoolVar(&o.clientTLS, "client-tls", false, "also write the client certificate Metacontroller presents for mutual TLS, and its CA (manifests/components/mtls)")
	fs.StringVar(&o.clientTLSSecret, "client-tls-secret", "memgraph-hooks-client-tls", "name of the kubernetes.io/tls Secret of --client-tls")
	fs.StringVar(&o.only, "only", "", `write only one Secret: "tls", "token" (with cert-manager, only the token) or "client-tls"`)
	fs.BoolVar(&o.rotate, "rotate", false,
		"write new Secrets (a new CA, certificate and token) without reading the cluster; afterwards restart Metacontroller (docs/security.md, \"Rotating\")")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "the kubeconfig to read the existing Secrets with (default: $KUBECONFIG or ~/.kube/config, as kubectl)")
	fs.StringVar(&o.context, "context", "", "the kubeconfig context to use (default: its current context)")
	showVersion := fs.Bool("version", false, "print the module version and the commit this binary was built from, and exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(out, "Usage: memgraph-hooks-secrets [flags] | kubectl apply -f -\n\n"+
				"Writes the hook's serving certificate, its CA and a bearer token as Secrets YAML. Run again, it writes\n"+
				"the Secrets that exist back unchanged (read through the kubeconfig, as kubectl reads them); --rotate\n"+
				"writes new ones.\n\nFlags:\n")
			fs.SetOutput(out)
			fs.PrintDefaults()
		}
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected argument %q: memgraph-hooks-secrets takes only flags", fs.Arg(0))
	case *showVersion:
		fmt.Fprintln(out, version.Line("memgraph-hooks-secrets"))
		return o, errVersion
	case o.only != "" && o.only != "tls" && o.only != "token" && o.only != "client-tls":
		return o, fmt.Errorf(`--only %q: want "tls", "token" or "client-tls"`, o.only)
	case o.validFor < time.Hour:
		return o, errors.New("--valid-for must be at least 1h")
	case o.namespace == "" || o.service == "" || o.tlsSecret == "" || o.tokenSecret == "" || o.clientTLSSecret == "":
		return o, errors.New("--namespace, --service, --tls-secret, --token-secret and --client-tls-secret must not be empty")
	case o.rotate && (o.kubeconfig != "" || o.context != ""):
		return o, errors.New("--rotate reads nothing from the cluster: drop --kubeconfig and --context")
	}
	o.clientTLS = o.clientTLS || o.only == "client-tls"
	return o, nil
}

// dnsNames are the names Metacontroller may use for the hook: the service-form webhook URL is
// https://<service>.<namespace>:<port>/..., and the longer forms resolve to the same Service.
func (o options) dnsNames() []string {
	base := o.service + "." + o.namespace
	return []string{base, base + ".svc", base + ".svc." + o.clusterDomain}
}
