package pending

import (
	"errors"
	"fmt"
	"testing"
)

func TestGetRemembersUntilForgotten(t *testing.T) {
	c := New[string]()
	n := 0
	gen := func() (string, error) { n++; return fmt.Sprint("v", n), nil }
	first, _ := c.Get("k", gen)
	again, _ := c.Get("k", gen)
	if first != "v1" || again != "v1" {
		t.Fatalf("Get twice: %q, %q; want the first value both times", first, again)
	}
	c.Forget("k")
	if v, _ := c.Get("k", gen); v != "v2" {
		t.Fatalf("Get after Forget: %q, want a new value", v)
	}
}

func TestAFailedGenerateIsNotRemembered(t *testing.T) {
	c := New[string]()
	if _, err := c.Get("k", func() (string, error) { return "", errors.New("no entropy") }); err == nil {
		t.Fatal("the error of generate was lost")
	}
	if v, _ := c.Get("k", func() (string, error) { return "ok", nil }); v != "ok" {
		t.Fatalf("Get after a failure: %q, want a generated value", v)
	}
}

func TestTheCacheStartsOverPastItsBound(t *testing.T) {
	c := New[int]()
	for i := range maxEntries {
		_, _ = c.Get(fmt.Sprint(i), func() (int, error) { return i, nil })
	}
	_, _ = c.Get("one more", func() (int, error) { return -1, nil })
	if v, _ := c.Get("0", func() (int, error) { return 42, nil }); v != 42 {
		t.Fatalf("key 0 past the bound: %d, want a new value", v)
	}
	if len(c.pending) > maxEntries {
		t.Fatalf("%d entries, want at most %d", len(c.pending), maxEntries)
	}
}
