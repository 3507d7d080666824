package backup

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// restoreStream serves the objects of restores to the Memgraph beside the agent, over plain
// HTTP on the pod's loopback interface: each object at a path holding a random token, once.
type restoreStream struct {
	base string // http://<loopback address>
	srv  *http.Server

	mu      sync.Mutex
	sources map[string]*streamSource // by token
}

// restoreStream starts the agent's stream server the first time a restore needs it.
func (a *Agent) restoreStream() (*restoreStream, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stream != nil {
		return a.stream, nil
	}
	ln, err := net.Listen("tcp", a.cfg.StreamListen)
	if err != nil {
		return nil, fmt.Errorf("serving restores on %s: %w", a.cfg.StreamListen, err)
	}
	s := &restoreStream{base: "http://" + ln.Addr().String(), sources: map[string]*streamSource{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /restores/{token}/{name}", s.get)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	a.stream = s
	return s, nil
}

func (s *restoreStream) close() { _ = s.srv.Close() }

// serve makes src available under a fresh token, as a file called name (the last segment of the
// URL, which Memgraph names its local copy after), until forget.
func (s *restoreStream) serve(src *streamSource, name string) (url string, forget func()) {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails on Linux
	token := hex.EncodeToString(b[:])
	s.mu.Lock()
	s.sources[token] = src
	s.mu.Unlock()
	return s.base + "/restores/" + token + "/" + name, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.sources, token)
	}
}

func (s *restoreStream) get(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	src := s.sources[r.PathValue("token")]
	s.mu.Unlock()
	if src == nil {
		http.Error(w, "no such restore", http.StatusNotFound)
		return
	}
	if !src.take() {
		http.Error(w, "this restore was fetched already", http.StatusConflict)
		return
	}
	src.send(r.Context(), w)
}

// streamSource is one database's object as a restore streams it: where it is, what the backup
// recorded of it (size, SHA-256 and CRC32C, when known), and what happened.
type streamSource struct {
	obj      S3Object
	creds    S3Credentials
	size     int64
	sha256   string
	crc32c   string
	progress func(sent int64)
	complete func() // every byte went out, verified

	mu       sync.Mutex
	taken    bool
	err      error
	sha, crc string
}

// take reports whether this is the source's first fetch.
func (src *streamSource) take() bool {
	src.mu.Lock()
	defer src.mu.Unlock()
	taken := src.taken
	src.taken = true
	return !taken
}

func (src *streamSource) fail(err error) {
	src.mu.Lock()
	defer src.mu.Unlock()
	if src.err == nil {
		src.err = err
	}
}

// failure is why the stream failed, nil when it did not.
func (src *streamSource) failure() error {
	src.mu.Lock()
	defer src.mu.Unlock()
	return src.err
}

// verified is the hex SHA-256 and the base64 CRC32C of the bytes sent, once they all went out.
func (src *streamSource) verified() (sha, crc string) {
	src.mu.Lock()
	defer src.mu.Unlock()
	return src.sha, src.crc
}

// send streams the object with its Content-Length, holding back its last chunk until the size,
// the SHA-256 and the CRC32C of the whole are checked against the backup's record (and the
// CRC32C against the store's own, when the record has none): a mismatch cuts the connection
// short, so Memgraph never has the whole file, fails the download and deletes what it got. A
// store that keeps another CRC32C than the record says holds another object: nothing is sent.
func (src *streamSource) send(ctx context.Context, w http.ResponseWriter) {
	body, info, err := OpenObject(ctx, src.obj, src.creds)
	if err != nil {
		src.fail(err)
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer body.Close()
	var refused error
	switch {
	case src.size > 0 && info.Size != src.size:
		refused = permanent("checksum: object s3://%s/%s holds %d bytes; the backup recorded %d", src.obj.Bucket, src.obj.Key, info.Size, src.size)
	case src.crc32c != "" && info.CRC32C != "" && info.CRC32C != src.crc32c:
		refused = permanent("checksum: the store keeps CRC32C %s for object s3://%s/%s; the backup recorded %s: it is not the object that was uploaded",
			info.CRC32C, src.obj.Bucket, src.obj.Key, src.crc32c)
	}
	if refused != nil {
		src.fail(refused)
		http.Error(w, "the object is not what the backup recorded", http.StatusBadGateway)
		return
	}
	if src.crc32c == "" {
		src.crc32c = info.CRC32C
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(info.Size, 10))
	w.WriteHeader(http.StatusOK)
	sha, crc, err := src.copyVerified(w, body, info.Size)
	if err != nil {
		src.fail(err)
		panic(http.ErrAbortHandler) // the client sees the transfer cut short
	}
	src.mu.Lock()
	src.sha, src.crc = sha, crc
	src.mu.Unlock()
	src.complete()
}

// copyVerified copies size bytes from body to w, one chunk behind the reads, and writes the
// last chunk only once the whole has the expected size, SHA-256 and CRC32C; it returns the two
// checksums of what it sent.
func (src *streamSource) copyVerified(w io.Writer, body io.Reader, size int64) (sha, crc string, err error) {
	h := newSums()
	bufs := [2][]byte{make([]byte, 1<<20), make([]byte, 1<<20)}
	var pending []byte
	var read, sent int64
	for i := 0; ; i++ {
		buf := bufs[i%2]
		n, err := io.ReadFull(body, buf)
		read += int64(n)
		h.Write(buf[:n])
		if n > 0 && pending != nil {
			if _, werr := w.Write(pending); werr != nil {
				return "", "", fmt.Errorf("streaming to Memgraph: %w", werr)
			}
			sent += int64(len(pending))
			src.progress(sent)
		}
		if n > 0 {
			pending = buf[:n]
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return "", "", storeError("download", src.obj, err)
		}
	}
	sum := h.sha256()
	switch {
	case read != size:
		return "", "", fmt.Errorf("object s3://%s/%s ended after %d of its %d bytes", src.obj.Bucket, src.obj.Key, read, size)
	case src.sha256 != "" && sum != src.sha256:
		return "", "", permanent("checksum: object s3://%s/%s has SHA-256 %s; the backup recorded %s: it was changed or damaged since it was uploaded",
			src.obj.Bucket, src.obj.Key, sum, src.sha256)
	case src.crc32c != "" && h.crc32c() != src.crc32c:
		return "", "", permanent("checksum: object s3://%s/%s has CRC32C %s; %s was recorded when it was uploaded: it was changed or damaged since",
			src.obj.Bucket, src.obj.Key, h.crc32c(), src.crc32c)
	}
	if pending != nil {
		if _, err := w.Write(pending); err != nil {
			return "", "", fmt.Errorf("streaming to Memgraph: %w", err)
		}
		src.progress(sent + int64(len(pending)))
	}
	return sum, h.crc32c(), nil
}
