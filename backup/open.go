package backup

import (
	"context"
	"io"

	"github.com/minio/minio-go/v7"
)

// OpenObject streams obj.Key. The request is made on the first Read, whose error is the store's
// refusal or a transfer cut short.
func OpenObject(ctx context.Context, obj S3Object, creds S3Credentials) (io.ReadCloser, error) {
	client, err := newStore(obj, creds)
	if err != nil {
		return nil, err
	}
	o, err := client.GetObject(ctx, obj.Bucket, obj.Key, minio.GetObjectOptions{})
	if err != nil {
		return nil, storeError("download", obj, err)
	}
	return o, nil
}
