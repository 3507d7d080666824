package backupcontroller

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
)

// AgentClientConfig is what the hook knows of one cluster's agents: the token and CA of the
// cluster's backup-agent Secret, and how to reach an advertised address.
type AgentClientConfig struct {
	Token string
	// CAPEM verifies the agents' serving certificates, whose names are the data members' FQDNs.
	CAPEM []byte
	// Resolve maps an advertised host:port to the one to dial (nil: dial as advertised). TLS
	// still verifies the advertised name.
	Resolve func(address string) string
	// Timeout bounds one call (default 5 s): calls only start or read a job, never wait for it.
	Timeout time.Duration
}

// AgentClient calls the backup agents of one cluster.
type AgentClient struct {
	token string
	http  *http.Client
}

// NewAgentClient checks cfg and returns a client.
func NewAgentClient(cfg AgentClientConfig) (*AgentClient, error) {
	if cfg.Token == "" {
		return nil, errors.New("backup agent token is empty")
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(cfg.CAPEM) {
		return nil, errors.New("backup agent CA holds no PEM certificate")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	dialer := &net.Dialer{Timeout: cfg.Timeout}
	transport := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: cfg.Timeout,
		MaxIdleConnsPerHost: 1,
		IdleConnTimeout:     30 * time.Second,
		DialContext: func(ctx context.Context, network, address string) (net.Conn, error) {
			if cfg.Resolve != nil {
				address = cfg.Resolve(address)
			}
			return dialer.DialContext(ctx, network, address)
		},
	}
	return &AgentClient{token: cfg.Token, http: &http.Client{Transport: transport, Timeout: cfg.Timeout}}, nil
}

// Close drops idle connections.
func (c *AgentClient) Close() { c.http.CloseIdleConnections() }

// Start starts job id on the agent at agentAddr (host:port) and returns its status. It is
// idempotent: a job that exists already is returned as it is, whatever req says (unless it failed
// and req.RetryFailed asks to run it again), and nothing is run twice.
func (c *AgentClient) Start(ctx context.Context, agentAddr, id string, req backup.JobRequest) (backup.JobStatus, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return backup.JobStatus{}, err
	}
	return c.do(ctx, http.MethodPut, agentAddr, id, body)
}

// Status reads job id. An id the agent does not know is an *UnknownJobError.
func (c *AgentClient) Status(ctx context.Context, agentAddr, id string) (backup.JobStatus, error) {
	return c.do(ctx, http.MethodGet, agentAddr, id, nil)
}

func (c *AgentClient) do(ctx context.Context, method, agentAddr, id string, body []byte) (backup.JobStatus, error) {
	if id == "" {
		return backup.JobStatus{}, errors.New("job id is empty")
	}
	u := url.URL{Scheme: "https", Host: agentAddr, Path: backup.JobsPath + id}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return backup.JobStatus{}, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return backup.JobStatus{}, fmt.Errorf("backup agent %s: %w", agentAddr, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return backup.JobStatus{}, fmt.Errorf("backup agent %s: reading the answer: %w", agentAddr, err)
	}
	var e backup.ErrorBody
	switch {
	case resp.StatusCode == http.StatusOK:
		var st backup.JobStatus
		if err := json.Unmarshal(data, &st); err != nil {
			return backup.JobStatus{}, fmt.Errorf("backup agent %s: undecodable answer: %w", agentAddr, err)
		}
		return st, nil
	case resp.StatusCode == http.StatusNotFound && json.Unmarshal(data, &e) == nil && e.Unknown:
		return backup.JobStatus{}, &UnknownJobError{Agent: agentAddr, ID: id}
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed:
		return backup.JobStatus{}, &AgentError{Agent: agentAddr, StatusCode: resp.StatusCode,
			Message: "the agent does not serve " + backup.JobsPath + " (it runs an older release: its pod gets the hook's agent image when it is next replaced)"}
	default:
		if json.Unmarshal(data, &e) != nil || e.Error == "" {
			e.Error = string(bytes.TrimSpace(data))
		}
		return backup.JobStatus{}, &AgentError{Agent: agentAddr, StatusCode: resp.StatusCode, Message: e.Error}
	}
}

// UnknownJobError is the agent's answer to Status for an id it does not know: it never started
// that job, or it restarted since. The hook fails a backup whose job it was; a restore is
// started again.
type UnknownJobError struct {
	Agent, ID string
}

func (e *UnknownJobError) Error() string {
	return fmt.Sprintf("backup agent %s has no job %q (it was never started there, or the agent restarted)", e.Agent, e.ID)
}

// AgentError is any other refusal by the agent: HTTP status and the agent's message.
type AgentError struct {
	Agent      string
	StatusCode int
	Message    string
}

func (e *AgentError) Error() string {
	return fmt.Sprintf("backup agent %s: %d %s: %s", e.Agent, e.StatusCode, http.StatusText(e.StatusCode), e.Message)
}
