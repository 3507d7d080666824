package bolt

import (
	"context"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// snapshotClient is the Pool's memgraph.SnapshotClient for one data instance: the queries the
// backup agent sends to the Memgraph beside it, each in the database it names.
type snapshotClient struct{ c *client }

var _ memgraph.SnapshotClient = snapshotClient{}

// Snapshots returns the SnapshotClient of the data instance at address, over TLS verified with t
// when t is set, with cred when it is not zero (else the PoolOptions' credentials). Its queries
// are bounded by their ctx alone: the caller gives CREATE SNAPSHOT and RECOVER SNAPSHOT the time
// the data needs.
func (p *Pool) Snapshots(address string, t *memgraph.BoltTLS, cred memgraph.Credentials) memgraph.SnapshotClient {
	return snapshotClient{&client{pool: p, address: address, tls: t, auth: newCredentials(cred)}}
}

func (s snapshotClient) ShowDatabases(ctx context.Context) ([]memgraph.Database, error) {
	t, err := s.c.runIn(ctx, "", memgraph.ShowDatabasesQuery, nil, true)
	if err != nil {
		return nil, err
	}
	out, err := memgraph.ParseDatabases(t.keys, t.rows)
	return out, s.c.annotate(err, memgraph.ShowDatabasesQuery)
}

// CreateDatabase is a write, never retried; Memgraph answers a database that exists with a
// row saying so, not an error.
func (s snapshotClient) CreateDatabase(ctx context.Context, name string) error {
	if err := memgraph.ValidateDatabaseName(name); err != nil {
		return s.c.annotate(err, "")
	}
	_, err := s.c.runIn(ctx, "", memgraph.CreateDatabaseQuery(name), nil, false)
	return err
}

func (s snapshotClient) ShowReplicationRole(ctx context.Context) (string, error) {
	t, err := s.c.runIn(ctx, "", memgraph.ShowReplicationRoleQuery, nil, true)
	if err != nil {
		return "", err
	}
	role, err := memgraph.ParseReplicationRole(t.keys, t.rows)
	return role, s.c.annotate(err, memgraph.ShowReplicationRoleQuery)
}

// CreateSnapshot is a write, never retried: a second one would take a second snapshot.
func (s snapshotClient) CreateSnapshot(ctx context.Context, database string) (string, error) {
	t, err := s.c.runIn(ctx, database, memgraph.CreateSnapshotQuery, nil, false)
	if err != nil {
		return "", err
	}
	path, err := memgraph.ParseCreateSnapshot(t.keys, t.rows)
	return path, s.c.annotate(err, memgraph.CreateSnapshotQuery)
}

func (s snapshotClient) ShowSnapshots(ctx context.Context, database string) ([]memgraph.Snapshot, error) {
	t, err := s.c.runIn(ctx, database, memgraph.ShowSnapshotsQuery, nil, true)
	if err != nil {
		return nil, err
	}
	out, err := memgraph.ParseSnapshots(t.keys, t.rows)
	return out, s.c.annotate(err, memgraph.ShowSnapshotsQuery)
}

// RecoverSnapshot is a write, never retried. The object store's credentials travel as query
// parameters, so that no log line or error (which show the query's text) carries them.
func (s snapshotClient) RecoverSnapshot(ctx context.Context, database, uri string, s3 *memgraph.S3Config) error {
	query, params := memgraph.RecoverSnapshotQuery(uri, s3)
	_, err := s.c.runIn(ctx, database, query, params, false)
	return err
}
