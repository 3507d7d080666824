package sim

import (
	"context"
	"fmt"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim/bolt"
)

// Query is one query an instance received over Bolt.
type Query struct {
	At         time.Time // when the instance received it
	Host       string
	Text       string
	ExplicitTx bool
	Failed     bool
	Message    string // the FAILURE message when Failed
	Phase      string // "RUN" or "PULL" when Failed: the Bolt message that got the FAILURE
}

var showInstancesFields = []string{"name", "bolt_server", "coordinator_server", "management_server", "health", "role", "last_succ_resp_ms"}

// run prepares one RUN on an instance (Memgraph's Interpreter::Prepare): parse errors,
// explicit-transaction and "Only coordinator" refusals and config-map shape errors fail here;
// the operation itself runs in Exec, at the first PULL.
func (w *World) run(in *instance, req bolt.Request) (*bolt.Prepared, *bolt.Failure) {
	w.mu.Lock()
	if !in.alive {
		w.mu.Unlock()
		return nil, &bolt.Failure{Code: bolt.CodeDatabaseError, Message: "instance is shutting down"}
	}
	idx := len(w.queries)
	w.queries = append(w.queries, Query{At: w.opts.clock.Now(), Host: in.host, Text: req.Query, ExplicitTx: req.ExplicitTx})
	latency := in.latency
	w.mu.Unlock()
	if latency > 0 {
		time.Sleep(latency) // a slow instance: every reply to RUN is delayed
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance()
	p, f := w.prepare(in, req)
	if f != nil {
		w.queries[idx].Failed, w.queries[idx].Message, w.queries[idx].Phase = true, f.Message, "RUN"
		return nil, f
	}
	exec := p.Exec
	p.Exec = func(ctx context.Context) bolt.Outcome {
		w.mu.Lock()
		defer w.mu.Unlock()
		defer w.settle()
		w.advance()
		out := bolt.Outcome{Type: "rw"}
		if exec != nil {
			out = exec(ctx)
		}
		if out.Err != nil {
			w.queries[idx].Failed, w.queries[idx].Message, w.queries[idx].Phase = true, out.Err.Message, "PULL"
		}
		return out
	}
	return p, nil
}

// prepare runs with w.mu held; the returned Exec is called with w.mu held too.
func (w *World) prepare(in *instance, req bolt.Request) (*bolt.Prepared, *bolt.Failure) {
	st, err := parseQuery(req.Query)
	if err != nil {
		return nil, bolt.ClientError(err.Error())
	}
	if st.kind.isCoordinatorQuery() && req.ExplicitTx {
		w.misuse(in.host, req.Query, MisuseQueryInTransaction,
			"coordinator query sent inside an explicit transaction (BEGIN … COMMIT); Memgraph only runs them auto-commit")
		return nil, bolt.ClientError(msgExplicitTx)
	}
	if st.kind == stReloadBoltTLS || st.kind == stReloadClusterTLS || !in.coord {
		return w.prepareInstance(in, st, req)
	}
	if !st.kind.isCoordinatorQuery() {
		return nil, bolt.ClientError(msgCoordinatorOnly)
	}
	op, f := w.bindCoordinatorQuery(st, req.Params)
	if f != nil {
		return nil, f
	}
	op.host, op.query = in.host, req.Query
	return &bolt.Prepared{Fields: op.fields(), Blocking: st.kind == stForceReset,
		Exec: func(ctx context.Context) bolt.Outcome { return w.execute(ctx, in, op) }}, nil
}

// prepareInstance prepares a reload, on any instance, or any query on a data instance, then
// refuses it when the data instance's user lacks the privilege it needs: Memgraph checks
// privileges once the query is prepared, so Prepare's own refusals come first.
func (w *World) prepareInstance(in *instance, st *statement, req bolt.Request) (*bolt.Prepared, *bolt.Failure) {
	var p *bolt.Prepared
	var f *bolt.Failure
	switch st.kind {
	case stReloadBoltTLS, stReloadClusterTLS:
		p, f = w.prepareReload(in, st, req.ExplicitTx)
	case stAuth:
		p, f = w.prepareAuth(in, st.auth, req)
	default:
		p, f = w.prepareData(in, st, req)
	}
	db, _ := sessionDatabase(req)
	if msg := unauthorized(in, st, req.User, db); f == nil && msg != "" {
		return nil, bolt.ClientError(msg)
	}
	return p, f
}

// coordOp is a coordinator query with its config map evaluated and checked.
type coordOp struct {
	st          *statement
	id          int64
	cfg         map[string]string
	host, query string // where the client sent it, for misuse records
}

func (op *coordOp) fields() []string {
	switch op.st.kind {
	case stShowInstances:
		return showInstancesFields
	case stShowInstance:
		return []string{"name", "bolt_server", "coordinator_server", "management_server", "role"}
	case stShowCoordinatorSettings:
		return []string{"setting_name", "setting_value"}
	case stShowReplicationLag:
		return []string{"instance_name", "data_info"}
	}
	return []string{}
}

// bindCoordinatorQuery evaluates literals and parameters and applies the RUN-time checks of
// HandleCoordinatorQuery (config map shape, id and setting literal types).
func (w *World) bindCoordinatorQuery(st *statement, params map[string]any) (*coordOp, *bolt.Failure) {
	op := &coordOp{st: st}
	if st.config != nil || st.kind == stRegisterInstance || st.kind == stAddCoordinator ||
		st.kind == stUpdateConfigInstance || st.kind == stUpdateConfigCoordinator {
		cfg, f := evalConfig(st.config, params)
		if f != nil {
			return nil, f
		}
		op.cfg = cfg
	}
	if st.kind == stAddCoordinator || st.kind == stRemoveCoordinator || st.kind == stUpdateConfigCoordinator {
		id, ok := st.id.(int64)
		if !ok {
			return nil, bolt.ClientError(fmt.Sprintf("Coordinator server id must be an integer, got %v.", st.id))
		}
		op.id = id
	}
	switch st.kind {
	case stRegisterInstance:
		return op, requireKeys(op.cfg, msgRegisterExactly3, "replication_server", "management_server", "bolt_server")
	case stAddCoordinator:
		return op, requireKeys(op.cfg, msgAddExactly3, "coordinator_server", "bolt_server", "management_server")
	case stUpdateConfigInstance, stUpdateConfigCoordinator:
		if _, ok := op.cfg["bolt_server"]; !ok || len(op.cfg) != 1 {
			return nil, bolt.ClientError(msgUpdateExactly1)
		}
	case stSetCoordinatorSetting:
		if _, ok := st.settingName.(string); !ok {
			return nil, &bolt.Failure{Code: bolt.CodeTransientError, Message: msgSettingNameLiteral}
		}
		if _, ok := st.settingValue.(string); !ok {
			return nil, &bolt.Failure{Code: bolt.CodeTransientError, Message: msgSettingValueLiteral}
		}
	}
	return op, nil
}

func requireKeys(cfg map[string]string, exactly string, keys ...string) *bolt.Failure {
	if len(cfg) != len(keys) {
		return bolt.ClientError(exactly)
	}
	for _, k := range keys {
		if _, ok := cfg[k]; !ok {
			return bolt.ClientError(msgMissingEntry(k))
		}
	}
	return nil
}

// evalConfig evaluates a config map; every key and value must be a string (ParseConfigMap).
func evalConfig(entries []configEntry, params map[string]any) (map[string]string, *bolt.Failure) {
	out := map[string]string{}
	for _, e := range entries {
		v := e.value
		if ref, ok := v.(paramRef); ok {
			pv, present := params[string(ref)]
			if !present {
				return nil, bolt.ClientError(fmt.Sprintf("Parameter $%s not provided.", ref))
			}
			v = pv
		}
		k, ok1 := e.key.(string)
		s, ok2 := v.(string)
		if !ok1 || !ok2 {
			return nil, bolt.ClientError(msgFailedConfigMap)
		}
		out[k] = s
	}
	return out, nil
}

func failure(msg string) bolt.Outcome { return bolt.Outcome{Err: bolt.ClientError(msg)} }
