package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// fetchS3 downloads the object of s3://bucket/key into local as Memgraph v3.12.0's GetS3Object
// does with the AWS SDK's TransferManager (utils/aws.cppm 243–283; aws-sdk-cpp 1.11
// TransferManager::DoDownload), from aws_endpoint_url (AWS's regional endpoint without it),
// path-style, signed with the query's keys: the object's size is asked first (HeadObject), and a
// refusal there — no such object, wrong keys, no store — writes nothing; then the object is
// streamed into local, created or truncated, and a transfer cut short leaves what arrived.
// RecoverSnapshot removes nothing after an S3 failure (inmemory/storage.cpp 4354–4357), unlike
// after a failed http(s) download (4327–4331), so the file stays in the snapshot directory.
//
// It speaks to the store with minio-go directly, not through package backup: the object-store
// client the hook's agents use is not what the tests' Memgraph fetches with.
func fetchS3(ctx context.Context, uri string, cfg map[string]string, local string) error {
	bucket, key, ok := strings.Cut(strings.TrimPrefix(uri, "s3://"), "/")
	if !ok || bucket == "" || key == "" {
		return errors.New("URI must contain bucket and object key")
	}
	endpoint := cfg["aws_endpoint_url"]
	if endpoint == "" {
		endpoint = "https://s3." + cfg["aws_region"] + ".amazonaws.com"
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return fmt.Errorf("endpoint %q: %v", endpoint, err)
	}
	client, err := minio.New(u.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(cfg["aws_access_key"], cfg["aws_secret_key"], ""),
		Secure:       u.Scheme == "https",
		Region:       cfg["aws_region"],
		BucketLookup: minio.BucketLookupPath,
		MaxRetries:   1,
	})
	if err != nil {
		return err
	}
	if _, err := client.StatObject(ctx, bucket, key, minio.StatObjectOptions{}); err != nil {
		return err
	}
	obj, err := client.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return err
	}
	defer obj.Close()
	f, err := os.Create(local)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, obj)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
