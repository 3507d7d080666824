package env

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// The object store's fixed test credentials and region.
const (
	ObjectStoreAccessKey = "e2e-access-key"
	ObjectStoreSecretKey = "e2e-secret-key-0123456789"
	ObjectStoreRegion    = "us-east-1"
)

// ObjectStore is versitygw (the S3 gateway, posix backend) serving one directory of the
// working directory on loopback twice: plain HTTP at Endpoint, and HTTPS at TLSEndpoint with a
// certificate for 127.0.0.1 from a throwaway CA (CAPEM).
type ObjectStore struct {
	// Endpoint is host:port; URL is http://Endpoint.
	Endpoint, URL                        string
	TLSEndpoint                          string
	CAPEM                                []byte
	AccessKeyID, SecretAccessKey, Region string
	// Dir holds the buckets (one directory each) and their objects (files).
	Dir string
}

// ObjectStore starts the object store on first use (Options.ObjectStoreBinary must be set)
// and returns it; it is stopped with the control plane, by PID.
func (e *Env) ObjectStore(ctx context.Context) (*ObjectStore, error) {
	e.storeMu.Lock()
	defer e.storeMu.Unlock()
	if e.store != nil {
		return e.store, nil
	}
	if e.storeBinary == "" {
		return nil, fmt.Errorf("no object store binary: e2e/tools/build.sh builds versitygw")
	}
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	s := &ObjectStore{
		Endpoint: "127.0.0.1:" + strconv.Itoa(ports[0]), TLSEndpoint: "127.0.0.1:" + strconv.Itoa(ports[1]),
		AccessKeyID: ObjectStoreAccessKey, SecretAccessKey: ObjectStoreSecretKey, Region: ObjectStoreRegion,
		Dir: filepath.Join(e.Dir, "objectstore"),
	}
	s.URL = "http://" + s.Endpoint
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return nil, err
	}
	certFile, keyFile, err := s.writeTLS(filepath.Join(e.Dir, "objectstore-tls"))
	if err != nil {
		return nil, err
	}
	base := []string{"--access", s.AccessKeyID, "--secret", s.SecretAccessKey, "--region", s.Region, "--quiet"}
	for _, run := range []struct {
		name, url string
		args      []string
	}{
		{"versitygw", s.URL, append(append([]string{}, base...), "--port", s.Endpoint, "posix", s.Dir)},
		{"versitygw-tls", "https://" + s.TLSEndpoint, append(append([]string{}, base...),
			"--port", s.TLSEndpoint, "--cert", certFile, "--key", keyFile, "posix", s.Dir)},
	} {
		if err := e.startStore(ctx, run.name, run.url, s.CAPEM, run.args); err != nil {
			return nil, err
		}
	}
	e.store = s
	return s, nil
}

// startStore starts one versitygw process and waits until it answers at url (any answer: a 403
// without credentials means it serves).
func (e *Env) startStore(ctx context.Context, name, url string, caPEM []byte, args []string) error {
	p, err := startProcess(name, e.storeBinary, e.LogDir, name, args...)
	if err != nil {
		return err
	}
	e.addProcess(p)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return poll(ctx, name, p, 50*time.Millisecond, func() error {
		resp, err := client.Get(url + "/")
		if err != nil {
			return err
		}
		return resp.Body.Close()
	})
}

// writeTLS makes a CA and a serving certificate for 127.0.0.1 and writes the pair into dir.
func (s *ObjectStore) writeTLS(dir string) (certFile, keyFile string, err error) {
	ca, err := newCA()
	if err != nil {
		return "", "", err
	}
	pair, err := ca.sign(pkix.Name{CommonName: "versitygw"}, true)
	if err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", err
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	for path, data := range map[string][]byte{certFile: pair.CertPEM, keyFile: pair.KeyPEM} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return "", "", err
		}
	}
	s.CAPEM = ca.CertPEM
	return certFile, keyFile, nil
}

// Client is a minio-go client for the store's HTTP endpoint, with the test credentials.
func (s *ObjectStore) Client() (*minio.Client, error) {
	return minio.New(s.Endpoint, &minio.Options{
		Creds: credentials.NewStaticV4(s.AccessKeyID, s.SecretAccessKey, ""), Region: s.Region, Secure: false,
	})
}

// CreateBucket creates a bucket (an existing one is fine).
func (s *ObjectStore) CreateBucket(ctx context.Context, name string) error {
	c, err := s.Client()
	if err != nil {
		return err
	}
	if ok, err := c.BucketExists(ctx, name); err == nil && ok {
		return nil
	}
	return c.MakeBucket(ctx, name, minio.MakeBucketOptions{Region: s.Region})
}
