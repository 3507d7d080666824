package backupcontroller

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
)

// What an agent answers reaches the planner as it said it: the job, or the HTTP status and the
// message of a refusal, a job it does not know, or no answer at all. Whether a refusal fails the
// backup is the planner's to judge.
func TestAnAgentsAnswerAsThePlannerReadsIt(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch req.URL.Path {
		case backup.JobsPath + "done":
			w.Write([]byte(`{"state":"Completed","chosenRole":"replica"}`))
		case backup.JobsPath + "readonly":
			w.WriteHeader(http.StatusConflict)
			w.Write([]byte(`{"error":"the instance's storage is read-only"}`))
		case backup.JobsPath + "unknown":
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":"no such job","unknownJob":true}`))
		default:
			http.NotFound(w, req)
		}
	}))
	defer srv.Close()
	agent := srv.Listener.Addr().String()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	client, err := NewAgentClient(AgentClientConfig{Token: "t", CAPEM: ca})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ask := func(address, id string) planner.AgentAnswer {
		return answerOf(client.Status(context.Background(), address, id))
	}

	if got := ask(agent, "done"); !got.Job.Completed || got.Job.ChosenRole != "replica" || got.Err != "" || got.Status != 0 {
		t.Errorf("a job: %+v", got)
	}
	if got := ask(agent, "readonly"); got.Status != http.StatusConflict || got.Message != "the instance's storage is read-only" || got.Err == "" {
		t.Errorf("a refusal: %+v", got)
	}
	if got := ask(agent, "unknown"); !got.Unknown || got.Err == "" {
		t.Errorf("an unknown job: %+v", got)
	}
	older := ask(agent, "older")
	if diff := cmp.Diff(planner.AgentAnswer{Status: http.StatusNotFound, Err: older.Err,
		Message: "the agent does not serve " + backup.JobsPath + " (it runs an older release: its pod gets the hook's agent image when it is next replaced)"}, older); diff != "" {
		t.Errorf("an agent of an older release (-want +got):\n%s", diff)
	}
	srv.Close()
	if got := ask(agent, "done"); got.Status != 0 || got.Err == "" || got.Unknown {
		t.Errorf("no answer: %+v", got)
	}
}
