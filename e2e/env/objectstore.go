package env

import (
	"context"
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

// ObjectStore is versitygw (the S3 gateway, posix backend) serving plain HTTP on loopback
// from a directory of the working directory.
type ObjectStore struct {
	// Endpoint is host:port; URL is http://Endpoint.
	Endpoint, URL                        string
	AccessKeyID, SecretAccessKey, Region string
	// Dir holds the buckets (one directory each) and their objects (files).
	Dir  string
	proc *process
}

// ObjectStore starts the object store on first use (Options.ObjectStoreBinary must be set)
// and returns it; it is stopped with the control plane.
func (e *Env) ObjectStore(ctx context.Context) (*ObjectStore, error) {
	e.storeMu.Lock()
	defer e.storeMu.Unlock()
	if e.store != nil {
		return e.store, nil
	}
	if e.storeBinary == "" {
		return nil, fmt.Errorf("no object store binary: e2e/tools/build.sh builds versitygw")
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	s := &ObjectStore{
		Endpoint: "127.0.0.1:" + strconv.Itoa(ports[0]), AccessKeyID: ObjectStoreAccessKey,
		SecretAccessKey: ObjectStoreSecretKey, Region: ObjectStoreRegion, Dir: filepath.Join(e.Dir, "objectstore"),
	}
	s.URL = "http://" + s.Endpoint
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return nil, err
	}
	p, err := startProcess("versitygw", e.storeBinary, e.LogDir, "versitygw",
		"--access", s.AccessKeyID, "--secret", s.SecretAccessKey, "--region", s.Region,
		"--port", s.Endpoint, "--quiet", "posix", s.Dir)
	if err != nil {
		return nil, err
	}
	e.procs = append(e.procs, p)
	s.proc = p
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	err = poll(ctx, "versitygw", p, 50*time.Millisecond, func() error {
		resp, err := client.Get(s.URL + "/")
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil // any answer (403 without credentials) means it serves
	})
	if err != nil {
		return nil, err
	}
	e.store = s
	return s, nil
}

// Client is a minio-go client for the store, with the test credentials.
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
