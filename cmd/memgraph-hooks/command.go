package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/serving"
	"github.com/memgraph-hooks/memgraph-hooks/internal/version"
)

// What the hook and `memgraph-hooks agent` share: the exit codes, the command line's parsing
// and checks, the logger, and serving until SIGTERM.

// errVersion is parseCommandLine's answer to --version, which it has printed.
var errVersion = errors.New("version printed")

// exitCode reports a command's outcome and returns its exit code: 0 after --help, --version or a
// clean shutdown; 2 for a command line that cannot run (parseErr, or a *FileError from run: a
// file flag names a file the command cannot use); 1 for any other failure while running.
func exitCode(command string, parseErr error, run func() error) int {
	switch {
	case errors.Is(parseErr, flag.ErrHelp), errors.Is(parseErr, errVersion):
		return 0
	case parseErr != nil:
		fmt.Fprintf(os.Stderr, "%s: %v\nRun %s --help to list the flags.\n", command, parseErr, command)
		return 2
	}
	err := run()
	var fe *FileError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &fe):
		fmt.Fprintf(os.Stderr, "%s: %v\nRun %s --help to list the flags.\n", command, err, command)
		return 2
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", command, err)
	return 1
}

// usage is what --help says besides the flags: what the command does, and the usage lines of
// its subcommands.
type usage struct {
	does        string
	subcommands []string // e.g. "agent [flags]    the backup agent of every data pod"
}

// parseCommandLine parses args into fs, which is named after the command, with the --version
// flag every command has. --help prints the usage to help and returns flag.ErrHelp; --version
// prints the version there and returns errVersion; errors are reported once, by exitCode. A
// command takes only flags.
func parseCommandLine(fs *flag.FlagSet, args []string, help io.Writer, u usage) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	showVersion := fs.Bool("version", false, "print the module version and the commit this binary was built from, and exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(fs, help, u)
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q: %s takes only flags, and none after it were read", fs.Arg(0), fs.Name())
	}
	if *showVersion {
		fmt.Fprintln(help, version.Line(fs.Name()))
		return errVersion
	}
	return nil
}

// printUsage prints a command's usage lines, what it does and its flags.
func printUsage(fs *flag.FlagSet, w io.Writer, u usage) {
	fmt.Fprintf(w, "Usage: %s [flags]\n", fs.Name())
	for _, sub := range u.subcommands {
		fmt.Fprintf(w, "       %s %s\n", fs.Name(), sub)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, u.does)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Flags:")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// checkServing refuses the serving flags both commands have when the command cannot run with
// them.
func checkServing(listen, logLevel string, shutdownTimeout time.Duration) error {
	switch {
	case listen == "":
		return errors.New("--listen must not be empty")
	case shutdownTimeout < 0:
		return fmt.Errorf("--shutdown-timeout must not be negative, got %s", shutdownTimeout)
	}
	_, err := newLogger(logLevel)
	return err
}

func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	return slog.New(hooks.LogHandler(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: l}))), nil
}

// newServer is an HTTP server for handler with the timeouts both commands use; write bounds
// writing one response.
func newServer(handler http.Handler, write time.Duration, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      write,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          serverLog(logger),
	}
}

// serverLog routes net/http's own lines (a failed TLS handshake, a panic in a handler, an accept
// error) into the JSON log at warn level, instead of plain text on stderr.
func serverLog(logger *slog.Logger) *log.Logger {
	return slog.NewLogLogger(logger.Handler(), slog.LevelWarn)
}

// serveUntilStopped serves servers[i] on lns[i], reloading creds in the background, until one
// fails or SIGTERM or an interrupt arrives; then it gives requests in flight up to
// shutdownTimeout. serving logs that the command serves, once every server has started.
func serveUntilStopped(logger *slog.Logger, creds *serving.Credentials, shutdownTimeout time.Duration,
	servers []*http.Server, lns []net.Listener, serving func()) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go creds.Run(ctx)
	errc := make(chan error, len(servers))
	for i, ln := range lns {
		go func() { errc <- serveOn(servers[i], ln) }()
	}
	serving()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	var errs []error
	for _, srv := range servers {
		errs = append(errs, srv.Shutdown(shutdownCtx))
	}
	return errors.Join(errs...)
}
