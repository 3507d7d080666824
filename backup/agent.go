package backup

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// TokenSource yields the bearer tokens a request may present (any one admits it); it is read on
// every request, so a rotated token file takes effect without a restart.
type TokenSource interface {
	Tokens() [][]byte
}

// AgentConfig configures the agent.
type AgentConfig struct {
	// SnapshotDir is the default database's snapshot directory as the agent sees it (the data
	// volume is mounted read-only at the same path as in the memgraph container, so the paths
	// CREATE SNAPSHOT answers are valid here too); its parent is the data directory, under which
	// the other databases' snapshot directories are. Only regular files directly in those are
	// ever read.
	SnapshotDir string
	Tokens      TokenSource
	// Memgraph opens the client of the Memgraph beside the agent for a job's target.
	Memgraph func(MemgraphTarget) (memgraph.SnapshotClient, error)
	Logger   *slog.Logger
	// MaxJobs bounds the finished jobs remembered (default 256); the oldest finished go first.
	MaxJobs int
	// RetryInterval is the first wait before a CREATE SNAPSHOT refused for a snapshot already
	// being written is sent again (default 1 s); the wait doubles up to 30 s.
	RetryInterval time.Duration
	// StreamListen is where the agent serves restores to Memgraph, over plain HTTP: an address
	// on the pod's loopback interface (default 127.0.0.1:0, any free port), which nothing outside
	// the pod reaches.
	StreamListen string
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Agent runs backup and restore jobs beside one Memgraph: PUT JobsPath+id starts one, GET
// JobsPath+id reads it, and GET /healthz answers without a token. Jobs live in memory: an agent
// that restarts knows none (Status answers 404, which the client turns into *UnknownJobError).
type Agent struct {
	cfg     AgentConfig
	dataDir string
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	mu     sync.Mutex
	jobs   map[string]*JobStatus
	order  []string // ids in start order
	stream *restoreStream
}

// NewAgent checks cfg and returns an agent; Close stops its jobs.
func NewAgent(cfg AgentConfig) (*Agent, error) {
	switch {
	case cfg.SnapshotDir == "":
		return nil, errors.New("snapshot directory is empty")
	case cfg.Tokens == nil:
		return nil, errors.New("the agent needs a bearer token source")
	case cfg.Memgraph == nil:
		return nil, errors.New("the agent needs a way to reach its Memgraph")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxJobs <= 0 {
		cfg.MaxJobs = 256
	}
	if cfg.RetryInterval <= 0 {
		cfg.RetryInterval = time.Second
	}
	if cfg.StreamListen == "" {
		cfg.StreamListen = "127.0.0.1:0"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Agent{cfg: cfg, dataDir: filepath.Dir(filepath.Clean(cfg.SnapshotDir)), ctx: ctx, cancel: cancel, jobs: map[string]*JobStatus{}}, nil
}

// Close cancels the jobs in flight, waits for them to end (as Failed) and stops serving
// restores.
func (a *Agent) Close() {
	a.cancel()
	a.wg.Wait()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stream != nil {
		a.stream.close()
	}
}

// Handler is the agent's HTTP API.
func (a *Agent) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.Handle("PUT "+JobsPath+"{id}", a.authenticate(http.HandlerFunc(a.start)))
	mux.Handle("GET "+JobsPath+"{id}", a.authenticate(http.HandlerFunc(a.status)))
	return mux
}

func (a *Agent) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		presented, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || presented == "" {
			writeError(w, http.StatusUnauthorized, "missing bearer token")
			return
		}
		for _, t := range a.cfg.Tokens.Tokens() {
			if subtle.ConstantTimeCompare([]byte(presented), t) == 1 {
				next.ServeHTTP(w, r)
				return
			}
		}
		writeError(w, http.StatusUnauthorized, "bearer token not accepted")
	})
}

// idPattern is what a job id may be: a Kubernetes UID fits, and nothing that could be read as a
// path or need escaping.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func (a *Agent) status(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	st, ok := a.Job(id)
	if !ok {
		writeJSON(w, http.StatusNotFound, ErrorBody{Error: fmt.Sprintf("no job %q: it was never started here, or this agent restarted since", id), Unknown: true})
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// Job is the status of job id, if the agent knows it.
func (a *Agent) Job(id string) (JobStatus, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	st, ok := a.jobs[id]
	if !ok {
		return JobStatus{}, false
	}
	return st.copy(), true
}

// copy is st with its own Databases, which the job goes on changing.
func (st *JobStatus) copy() JobStatus {
	out := *st
	out.Databases = append([]DatabaseJob(nil), st.Databases...)
	return out
}

// start starts job id, or returns it when it exists (whatever the body says), unless it failed
// and the request asks to retry it.
func (a *Agent) start(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !idPattern.MatchString(id) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("job id %q: want 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit", id))
		return
	}
	req, err := decodeJobRequest(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	st, started := a.begin(id, req)
	if started {
		a.wg.Add(1)
		go a.run(id, req)
	}
	writeJSON(w, http.StatusOK, st)
}

// begin records job id as running and reports true, or returns the job that exists.
func (a *Agent) begin(id string, req JobRequest) (JobStatus, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if st, ok := a.jobs[id]; ok && !(req.RetryFailed && st.State == StateFailed) {
		return st.copy(), false
	}
	st := &JobStatus{Kind: req.Kind, State: StateRunning, ChosenRole: req.Role, Reason: req.Reason, StartedAt: a.cfg.Now().UTC().Truncate(time.Second), Deadline: req.Deadline.UTC()}
	if _, ok := a.jobs[id]; !ok {
		a.order = append(a.order, id)
	}
	a.jobs[id] = st
	a.forgetOldLocked()
	return st.copy(), true
}

// run runs a job to its end, under its deadline, and records the outcome.
func (a *Agent) run(id string, req JobRequest) {
	defer a.wg.Done()
	ctx, cancel := context.WithDeadline(a.ctx, req.Deadline)
	defer cancel()
	log := a.cfg.Logger.With("job", id, "kind", req.Kind, "bucket", req.Store.Bucket, "key", req.Store.Key)
	log.Info("job started", "deadline", req.Deadline)
	begin := time.Now()
	var err error
	switch req.Kind {
	case KindBackup:
		err = a.runBackup(ctx, id, req)
	case KindRestore:
		err = a.runRestore(ctx, id, req)
	}
	a.update(id, func(st *JobStatus) {
		st.State, st.FinishedAt = StateCompleted, a.cfg.Now().UTC().Truncate(time.Second)
		if err == nil {
			st.Phase = ""
		} else {
			st.State, st.Error = StateFailed, jobError(ctx, err)
			var p *permanentError
			st.Permanent = errors.As(err, &p)
		}
	})
	if err != nil {
		log.Warn("job failed", "error", jobError(ctx, err), "seconds", time.Since(begin).Seconds())
		return
	}
	log.Info("job completed", "seconds", time.Since(begin).Seconds())
}

// jobError is err's text, saying so when the job's deadline ended it.
func jobError(ctx context.Context, err error) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "the job's deadline passed: " + err.Error()
	}
	return err.Error()
}

// update changes job id's status under the agent's lock.
func (a *Agent) update(id string, change func(*JobStatus)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if st, ok := a.jobs[id]; ok {
		change(st)
	}
}

// forgetOldLocked drops the oldest finished jobs beyond MaxJobs. Caller holds a.mu.
func (a *Agent) forgetOldLocked() {
	for i := 0; len(a.order) > a.cfg.MaxJobs && i < len(a.order); {
		if id := a.order[i]; a.jobs[id].Done() {
			delete(a.jobs, id)
			a.order = append(a.order[:i], a.order[i+1:]...)
			continue
		}
		i++
	}
}

// permanentError is a failure trying again does not mend.
type permanentError struct{ msg string }

func (e *permanentError) Error() string { return e.msg }

func permanent(format string, args ...any) error {
	return &permanentError{msg: fmt.Sprintf(format, args...)}
}

// retrying runs try until it succeeds, fails with an error again says is not worth another try,
// or ctx ends; between tries it waits cfg.RetryInterval, doubling up to 30 s, and tells waited.
func (a *Agent) retrying(ctx context.Context, try func() error, again func(error) bool, waited func()) error {
	wait := a.cfg.RetryInterval
	for {
		err := try()
		if err == nil || !again(err) {
			return err
		}
		if waited != nil {
			waited()
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// unreachable: Memgraph did not answer (it may be starting); worth another try.
func unreachable(err error) bool {
	k := memgraph.KindOf(err)
	return k == memgraph.KindUnreachable || k == memgraph.KindClosed
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, ErrorBody{Error: msg})
}

// SnapshotsVia is AgentConfig.Memgraph for a pool's Snapshots (memgraph/bolt's Pool.Snapshots):
// a target's CA, when it has one, is the only trust for the instance's Bolt certificate, and its
// user, when it has one, logs in.
func SnapshotsVia(snapshots func(address string, t *memgraph.BoltTLS, cred memgraph.Credentials) memgraph.SnapshotClient) func(MemgraphTarget) (memgraph.SnapshotClient, error) {
	return func(m MemgraphTarget) (memgraph.SnapshotClient, error) {
		var trust *memgraph.BoltTLS
		if len(m.CAPEM) > 0 {
			var err error
			if trust, err = memgraph.NewBoltTLS(m.CAPEM); err != nil {
				return nil, fmt.Errorf("the Bolt CA of %s: %w", m.Address, err)
			}
		}
		return snapshots(m.Address, trust, memgraph.Credentials{Username: m.Username, Password: m.Password}), nil
	}
}
