package bolt

import (
	"context"
	"errors"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

var _ memgraph.UserClient = (*client)(nil)

// The auth reads and statements, sent to the MAIN data instance at c.address. Reads are retried
// once on a dead pooled connection like ShowInstances; a statement never is.

func (c *client) ShowUsers(ctx context.Context) ([]string, error) {
	t, err := c.run(ctx, memgraph.ShowUsersQuery, true)
	if err != nil {
		return nil, err
	}
	out, err := memgraph.ParseUsers(t.keys, t.rows)
	return out, c.annotate(err, memgraph.ShowUsersQuery)
}

func (c *client) ShowRoles(ctx context.Context) ([]memgraph.RoleInfo, error) {
	t, err := c.run(ctx, memgraph.ShowRolesQuery, true)
	if err != nil {
		return nil, err
	}
	out, err := memgraph.ParseRoles(t.keys, t.rows)
	return out, c.annotate(err, memgraph.ShowRolesQuery)
}

func (c *client) ShowPrivileges(ctx context.Context, target memgraph.AuthTarget, database string) ([]memgraph.PrivilegeRow, error) {
	if err := validateRead(target, database); err != nil {
		return nil, c.annotate(err, "")
	}
	query := memgraph.ShowPrivilegesQuery(target, database)
	t, err := c.run(ctx, query, true)
	if err != nil {
		return nil, err
	}
	out, err := memgraph.ParsePrivileges(t.keys, t.rows)
	return out, c.annotate(err, query)
}

func (c *client) ShowRolesForUser(ctx context.Context, user string) ([]string, error) {
	if err := memgraph.ValidateAuthName(user); err != nil {
		return nil, c.annotate(err, "")
	}
	query := memgraph.ShowRolesForUserQuery(user)
	t, err := c.run(ctx, query, true)
	if err != nil {
		return nil, err
	}
	out, err := memgraph.ParseRolesForUser(t.keys, t.rows)
	return out, c.annotate(err, query)
}

func (c *client) ShowDatabasePrivileges(ctx context.Context, target memgraph.AuthTarget) (memgraph.DatabaseAccess, error) {
	if err := memgraph.ValidateAuthName(target.Name); err != nil {
		return memgraph.DatabaseAccess{}, c.annotate(err, "")
	}
	query := memgraph.ShowDatabasePrivilegesQuery(target)
	t, err := c.run(ctx, query, true)
	if err != nil {
		return memgraph.DatabaseAccess{}, err
	}
	out, err := memgraph.ParseDatabasePrivileges(t.keys, t.rows)
	return out, c.annotate(err, query)
}

func validateRead(target memgraph.AuthTarget, database string) error {
	if err := memgraph.ValidateAuthName(target.Name); err != nil {
		return err
	}
	return memgraph.ValidateDatabaseName(database)
}

// RunAuth sends s as it is (Memgraph 3.12 takes a password only as a string literal, never as a
// parameter: MemgraphCypher.g4 497–502, cypher_main_visitor.cpp 2288–2307), showing s.Text()
// in its place in logs and errors; should Memgraph's answer quote the password hash (a syntax
// error quotes the literal it stopped at), the error shows <redacted> there too.
func (c *client) RunAuth(ctx context.Context, s memgraph.AuthStatement) error {
	if err := memgraph.ValidateAuthStatement(s); err != nil {
		return c.annotate(err, s.Text())
	}
	_, err := c.runShown(ctx, "", s.Query(), s.Text(), nil, false)
	return scrub(err, s)
}

// scrub removes the statement's password from err's message and drops the driver's error, whose
// text is Memgraph's message again.
func scrub(err error, s memgraph.AuthStatement) error {
	var e *memgraph.Error
	if err == nil || !errors.As(err, &e) {
		return err
	}
	e.Message = s.Redact(e.Message)
	e.Err = nil
	return e
}
