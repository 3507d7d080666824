package bolt

import (
	"bufio"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNegotiateFollowsMemgraphVersionList(t *testing.T) {
	cases := []struct {
		name         string
		offer        []byte
		major, minor byte
		ok           bool
	}{
		{"driver v5.28 (manifest slot skipped, 5.8..5.0 → 5.2)", []byte{0, 0, 1, 0xFF, 0, 8, 8, 5, 0, 2, 4, 4, 0, 0, 0, 3}, 5, 2, true},
		{"only 4.4..4.2", []byte{0, 2, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 4, 4, true},
		{"5.1..5.0 falls to 4.3", []byte{0, 1, 1, 5, 0, 0, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0}, 4, 3, true},
		{"5.8..5.3 has no supported minor", []byte{0, 5, 8, 5, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0}, 0, 0, false},
	}
	for _, tc := range cases {
		major, minor, ok := negotiate(tc.offer)
		if major != tc.major || minor != tc.minor || ok != tc.ok {
			t.Errorf("%s: got %d.%d %v", tc.name, major, minor, ok)
		}
	}
}

func TestPackStreamRoundTrip(t *testing.T) {
	long := strings.Repeat("x", 70000)
	values := []any{nil, true, false, int64(0), int64(-16), int64(-17), int64(127), int64(128), int64(-129),
		int64(32768), int64(-2147483649), int64(1) << 40, 1.5, "", "short", strings.Repeat("y", 300), long,
		[]any{int64(1), "a", []any{}}, map[string]any{"k": map[string]any{"n": int64(-1)}}, []byte{1, 2}}
	for _, v := range values {
		e := &encoder{}
		e.value(v)
		d := &decoder{buf: e.buf}
		got, err := d.value()
		if err != nil || d.pos != len(e.buf) {
			t.Fatalf("%v: err %v, consumed %d of %d", v, err, d.pos, len(e.buf))
		}
		if !cmp.Equal(v, got) {
			t.Fatalf("round trip %T: got %T", v, got)
		}
	}
}

type fixed struct{}

func (fixed) Run(req Request) (*Prepared, *Failure) {
	switch req.Query {
	case "FAIL AT RUN":
		return nil, ClientError("run failed")
	case "FAIL AT PULL":
		return &Prepared{Exec: func(context.Context) Outcome { return Outcome{Err: ClientError("pull failed")} }}, nil
	}
	return &Prepared{Fields: []string{"n"}, Exec: func(context.Context) Outcome {
		return Outcome{Rows: [][]any{{int64(1)}, {int64(2)}, {int64(3)}}, Type: "r"}
	}}, nil
}

// rawClient speaks Bolt by hand so tests can pipeline and look at every reply.
type rawClient struct {
	t  *testing.T
	c  net.Conn
	rw *bufio.ReadWriter
}

func dialRaw(t *testing.T, offer []byte) (*rawClient, []byte) { return dialRawTo(t, fixed{}, offer) }

func dialRawTo(t *testing.T, h Handler, offer []byte) (*rawClient, []byte) {
	s, err := Listen("127.0.0.1:0", h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	rc := &rawClient{t: t, c: c, rw: bufio.NewReadWriter(bufio.NewReader(c), bufio.NewWriter(c))}
	_, _ = rc.rw.Write(append([]byte{0x60, 0x60, 0xB0, 0x17}, offer...))
	_ = rc.rw.Flush()
	reply := make([]byte, 4)
	if _, err := rc.rw.Read(reply); err != nil {
		t.Fatal(err)
	}
	return rc, reply
}

// send writes several messages in one TCP write (pipelining).
func (rc *rawClient) send(msgs ...Structure) {
	for _, m := range msgs {
		e := &encoder{}
		e.value(m)
		if err := writeMessage(rc.rw, e.buf); err != nil {
			rc.t.Fatal(err)
		}
	}
	if err := rc.rw.Flush(); err != nil {
		rc.t.Fatal(err)
	}
}

func (rc *rawClient) recv() Structure {
	raw, err := readMessage(rc.rw)
	if err != nil {
		rc.t.Fatal(err)
	}
	m, err := decodeMessage(raw)
	if err != nil {
		rc.t.Fatal(err)
	}
	return m
}

func (rc *rawClient) tags(n int) []byte {
	var out []byte
	for range n {
		out = append(out, rc.recv().Tag)
	}
	return out
}

func TestBolt44PipelinedFailureIgnoredUntilReset(t *testing.T) {
	rc, reply := dialRaw(t, []byte{0, 2, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	if !cmp.Equal(reply, []byte{0, 0, 4, 4}) {
		t.Fatalf("handshake reply %v", reply)
	}
	hello := Structure{Tag: tagHello, Fields: []any{map[string]any{"user_agent": "raw", "scheme": "none"}}}
	run := func(q string) Structure {
		return Structure{Tag: tagRun, Fields: []any{q, map[string]any{}, map[string]any{}}}
	}
	pull := func(n int64) Structure { return Structure{Tag: tagPull, Fields: []any{map[string]any{"n": n}}} }
	rc.send(hello, run("FAIL AT RUN"), pull(-1), run("ROWS"), Structure{Tag: tagReset}, run("ROWS"), pull(2), pull(2))
	got := rc.tags(11)
	want := []byte{tagSuccess, tagFailure, tagIgnored, tagIgnored, tagSuccess, tagSuccess, tagRecord, tagRecord, tagSuccess, tagRecord, tagSuccess}
	if !cmp.Equal(got, want) {
		t.Fatalf("replies % X, want % X", got, want)
	}
	rc.send(run("FAIL AT PULL"), pull(-1), Structure{Tag: tagReset})
	if got := rc.tags(3); !cmp.Equal(got, []byte{tagSuccess, tagFailure, tagSuccess}) {
		t.Fatalf("PULL-phase failure replies % X", got)
	}
}

func TestBolt52RequiresLogonAndAnswersTxQid(t *testing.T) {
	rc, reply := dialRaw(t, []byte{0, 0, 1, 0xFF, 0, 8, 8, 5, 0, 2, 4, 4, 0, 0, 0, 3})
	if !cmp.Equal(reply, []byte{0, 0, 2, 5}) {
		t.Fatalf("handshake reply %v", reply)
	}
	rc.send(Structure{Tag: tagHello, Fields: []any{map[string]any{"user_agent": "raw"}}},
		Structure{Tag: tagLogon, Fields: []any{map[string]any{"scheme": "none"}}},
		Structure{Tag: tagBegin, Fields: []any{map[string]any{}}},
		Structure{Tag: tagRun, Fields: []any{"ROWS", map[string]any{}, map[string]any{}}})
	hello := rc.recv()
	if hello.Tag != tagSuccess || hello.Fields[0].(map[string]any)["server"] != ServerAgent {
		t.Fatalf("HELLO reply %+v", hello)
	}
	rc.recv()
	rc.recv()
	runReply := rc.recv().Fields[0].(map[string]any)
	if !cmp.Equal(runReply, map[string]any{"fields": []any{"n"}, "qid": int64(0)}) {
		t.Fatalf("RUN in tx reply %v", runReply)
	}
}

// blocker answers "WAIT" with a Blocking query that returns once release is closed, or reports
// a cancelled context on hungUp; anything else as fixed does.
type blocker struct {
	release, hungUp chan struct{}
}

func (b blocker) Run(req Request) (*Prepared, *Failure) {
	if req.Query != "WAIT" {
		return fixed{}.Run(req)
	}
	return &Prepared{Blocking: true, Exec: func(ctx context.Context) Outcome {
		select {
		case <-b.release:
			return Outcome{Type: "w"}
		case <-ctx.Done():
			close(b.hungUp)
			return Outcome{Err: ClientError("abandoned")}
		}
	}}, nil
}

var bolt44 = []byte{0, 2, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}

func rawRun(q string) Structure {
	return Structure{Tag: tagRun, Fields: []any{q, map[string]any{}, map[string]any{}}}
}

var rawPull = Structure{Tag: tagPull, Fields: []any{map[string]any{"n": int64(-1)}}}

func TestBlockingQuerySeesTheClientHangUp(t *testing.T) {
	b := blocker{release: make(chan struct{}), hungUp: make(chan struct{})}
	rc, _ := dialRawTo(t, b, bolt44)
	rc.send(Structure{Tag: tagHello, Fields: []any{map[string]any{"user_agent": "raw"}}}, rawRun("WAIT"), rawPull)
	if got := rc.tags(2); !cmp.Equal(got, []byte{tagSuccess, tagSuccess}) {
		t.Fatalf("HELLO and RUN replies % X", got)
	}
	_ = rc.c.Close()
	select {
	case <-b.hungUp:
	case <-time.After(5 * time.Second):
		t.Fatal("the blocking query never learnt that its client hung up")
	}
}

func TestBlockingQueryEndsWhenTheClientSendsAnotherMessage(t *testing.T) {
	b := blocker{release: make(chan struct{}), hungUp: make(chan struct{})}
	rc, _ := dialRawTo(t, b, bolt44)
	rc.send(Structure{Tag: tagHello, Fields: []any{map[string]any{"user_agent": "raw"}}}, rawRun("WAIT"), rawPull)
	rc.tags(2)
	rc.send(Structure{Tag: tagReset})
	select {
	case <-b.hungUp:
	case <-time.After(5 * time.Second):
		t.Fatal("a RESET sent during a blocking query did not end the wait")
	}
	// The abandoned query's FAILURE, then the RESET's SUCCESS: the RESET was not lost.
	if got := rc.tags(2); !cmp.Equal(got, []byte{tagFailure, tagSuccess}) {
		t.Fatalf("replies % X", got)
	}
}

func TestBlockingQueryLeavesTheConnectionUsable(t *testing.T) {
	b := blocker{release: make(chan struct{}), hungUp: make(chan struct{})}
	rc, _ := dialRawTo(t, b, bolt44)
	rc.send(Structure{Tag: tagHello, Fields: []any{map[string]any{"user_agent": "raw"}}}, rawRun("WAIT"), rawPull)
	rc.tags(2)
	time.Sleep(20 * time.Millisecond) // let the watcher start peeking
	close(b.release)
	if got := rc.recv(); got.Tag != tagSuccess {
		t.Fatalf("PULL reply %+v", got)
	}
	rc.send(rawRun("ROWS"), rawPull)
	if got := rc.tags(5); !cmp.Equal(got, []byte{tagSuccess, tagRecord, tagRecord, tagRecord, tagSuccess}) {
		t.Fatalf("replies after the blocking query % X", got)
	}
	select {
	case <-b.hungUp:
		t.Fatal("a completed query was told its client hung up")
	default:
	}
}
