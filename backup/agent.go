package backup

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
)

// TokenSource yields the bearer tokens a request may present (any one admits it); it is read on
// every request, so a rotated token file takes effect without a restart.
type TokenSource interface {
	Tokens() [][]byte
}

// AgentConfig configures the agent's server.
type AgentConfig struct {
	// SnapshotDir is the instance's snapshot directory as the agent sees it (the data volume is
	// mounted read-only at the same path as in the memgraph container, so SHOW SNAPSHOTS' paths
	// are valid here too). Only regular files directly in it are ever read.
	SnapshotDir string
	Tokens      TokenSource
	Logger      *slog.Logger
	// MaxJobs bounds the finished jobs remembered (default 256); the oldest finished go first.
	MaxJobs int
}

// Agent serves upload jobs: PUT UploadsPath+id starts one, GET UploadsPath+id reads it, and
// GET /healthz answers without a token. Jobs live in memory: an agent that restarts knows none
// (Status answers 404, which the client turns into *UnknownUploadError).
type Agent struct {
	cfg    AgentConfig
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	jobs  map[string]*job
	order []string // ids in start order
}

type job struct {
	status UploadStatus
	done   bool
}

// NewAgent checks cfg and returns an agent; Close stops its uploads.
func NewAgent(cfg AgentConfig) (*Agent, error) {
	if cfg.SnapshotDir == "" {
		return nil, errors.New("snapshot directory is empty")
	}
	if cfg.Tokens == nil {
		return nil, errors.New("the agent needs a bearer token source")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxJobs <= 0 {
		cfg.MaxJobs = 256
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Agent{cfg: cfg, ctx: ctx, cancel: cancel, jobs: map[string]*job{}}, nil
}

// Close cancels the uploads in flight and waits for them to end (as Failed).
func (a *Agent) Close() {
	a.cancel()
	a.wg.Wait()
}

// Handler is the agent's HTTP API.
func (a *Agent) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.Handle("PUT "+UploadsPath+"{id}", a.authenticate(http.HandlerFunc(a.start)))
	mux.Handle("GET "+UploadsPath+"{id}", a.authenticate(http.HandlerFunc(a.status)))
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
	a.mu.Lock()
	j, ok := a.jobs[id]
	var st UploadStatus
	if ok {
		st = j.status
	}
	a.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no upload %q: it was never started here, or this agent restarted since", id))
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// start starts job id, or returns it when it exists (whatever the body says).
func (a *Agent) start(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !idPattern.MatchString(id) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("upload id %q: want 1-128 letters, digits, '.', '_' or '-', starting with a letter or digit", id))
		return
	}
	a.mu.Lock()
	if j, ok := a.jobs[id]; ok {
		st := j.status
		a.mu.Unlock()
		writeJSON(w, http.StatusOK, st)
		return
	}
	a.mu.Unlock()
	req, err := decodeUploadRequest(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	snap, err := openSnapshot(a.cfg.SnapshotDir, req.Snapshot)
	if err != nil {
		code := http.StatusBadRequest
		if errors.Is(err, errNoSnapshot) {
			code = http.StatusUnprocessableEntity
		}
		writeError(w, code, err.Error())
		return
	}
	a.mu.Lock()
	if j, ok := a.jobs[id]; ok { // a concurrent Start won the race
		st := j.status
		a.mu.Unlock()
		_ = snap.file.Close()
		writeJSON(w, http.StatusOK, st)
		return
	}
	running := UploadStatus{State: StateRunning, Job: UploadJob{Snapshot: req.Snapshot, SnapshotTimestamp: req.SnapshotTimestamp,
		Key: req.Object.Key, StartedAt: time.Now().UTC().Truncate(time.Second)}}
	a.jobs[id] = &job{status: running}
	a.order = append(a.order, id)
	a.forgetOldLocked()
	a.mu.Unlock()
	a.wg.Add(1)
	go a.run(id, req, snap, running.Job)
	writeJSON(w, http.StatusOK, running)
}

// run uploads the snapshot and records the outcome.
func (a *Agent) run(id string, req UploadRequest, snap snapshotFile, started UploadJob) {
	defer a.wg.Done()
	defer snap.file.Close()
	begin := time.Now()
	log := a.cfg.Logger.With("upload", id, "snapshot", snap.path, "bucket", req.Object.Bucket, "key", req.Object.Key, "size", snap.size)
	log.Info("upload started")
	res, err := Upload(a.ctx, req.Object, req.Credentials, snap.file, snap.size)
	st := UploadStatus{State: StateCompleted, Job: started, Result: res}
	if err != nil {
		st = UploadStatus{State: StateFailed, Job: started, Error: err.Error()}
		log.Warn("upload failed", "error", err.Error(), "seconds", time.Since(begin).Seconds())
	} else {
		log.Info("upload completed", "etag", res.ETag, "seconds", time.Since(begin).Seconds())
	}
	a.mu.Lock()
	a.jobs[id].status, a.jobs[id].done = st, true
	a.mu.Unlock()
}

// forgetOldLocked drops the oldest finished jobs beyond MaxJobs. Caller holds a.mu.
func (a *Agent) forgetOldLocked() {
	for i := 0; len(a.order) > a.cfg.MaxJobs && i < len(a.order); {
		if id := a.order[i]; a.jobs[id].done {
			delete(a.jobs, id)
			a.order = append(a.order[:i], a.order[i+1:]...)
			continue
		}
		i++
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, errorBody{Error: msg})
}
