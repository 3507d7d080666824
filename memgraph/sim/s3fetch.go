package sim

import (
	"context"
	"io"
	"os"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
)

// fetchS3 downloads obj into local as Memgraph v3.12.0's GetS3Object does with the AWS SDK's
// TransferManager (utils/aws.cppm 243–283; aws-sdk-cpp 1.11 TransferManager::DoDownload): the
// object's size is asked first (HeadObject), and a refusal there — no such object, wrong keys, no
// store — writes nothing; then the object is streamed into local, created or truncated, and a
// transfer cut short leaves what arrived. RecoverSnapshot removes nothing after an S3 failure
// (inmemory/storage.cpp 4354–4357), unlike after a failed http(s) download (4327–4331), so the
// file stays in the snapshot directory.
func fetchS3(ctx context.Context, obj backup.S3Object, creds backup.S3Credentials, local string) error {
	if _, err := backup.StatObject(ctx, obj, creds); err != nil {
		return err
	}
	r, err := backup.OpenObject(ctx, obj, creds)
	if err != nil {
		return err
	}
	defer r.Close()
	f, err := os.Create(local)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
