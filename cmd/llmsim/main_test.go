package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startRun runs the command in-process and returns its base URL.
func startRun(t *testing.T, args ...string) (url string, stop func() error, out *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out = &syncBuffer{}
	var errOut syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, out, &errOut) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if s := out.String(); strings.Contains(s, "listening on ") {
			url = strings.Fields(s[strings.Index(s, "listening on ")+len("listening on "):])[0]
			break
		}
		select {
		case err := <-done:
			cancel()
			t.Fatalf("run exited early: %v (stderr %s)", err, errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatal("no listening line")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return url, func() error { cancel(); return <-done }, out
}

func TestRunServesAndShutsDown(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "p.json")
	if err := os.WriteFile(prof, []byte(`{"preset":"instant","name":"smoke","tokens_per_second":0}`), 0o644); err != nil {
		t.Fatal(err)
	}
	url, stop, out := startRun(t, "-addr", "127.0.0.1:0", "-profile", prof, "-seed", "3", "-api-key", "sk-smoke", "-models", "m1, m2")
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/v1") {
		t.Fatalf("url %q", url)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	get := func(auth string) (int, []byte) {
		req, _ := http.NewRequest(http.MethodGet, url+"/models", nil)
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	if code, _ := get(""); code != 401 {
		t.Errorf("without the key: %d", code)
	}
	code, body := get("sk-smoke")
	var list struct {
		Data []struct{ ID string } `json:"data"`
	}
	if err := json.Unmarshal(body, &list); code != 200 || err != nil || len(list.Data) != 2 || list.Data[1].ID != "m2" {
		t.Errorf("GET /v1/models: %d %s", code, body)
	}
	req, _ := http.NewRequest(http.MethodPost, url+"/chat/completions", strings.NewReader(`{"model":"m1","messages":[{"role":"user","content":"hi"}],"stream":true}`))
	req.Header.Set("Authorization", "Bearer sk-smoke")
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.HasSuffix(string(b), "data: [DONE]\n\n") {
		t.Errorf("chat stream: %d %q", res.StatusCode, b)
	}
	if err := stop(); err != nil {
		t.Errorf("run: %v", err)
	}
	if s := out.String(); !strings.Contains(s, "profile smoke") || !strings.Contains(s, "served 1 generations (1 completed)") {
		t.Errorf("output:\n%s", s)
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-preset", "nope"},
		{"-profile", "/does/not/exist.json"},
		{"-bogus"},
		{"extra-arg"},
		{"-addr", "256.0.0.1:99999"},
	} {
		var out, errOut bytes.Buffer
		err := run(context.Background(), args, &out, &errOut)
		if err == nil {
			t.Errorf("run(%q) succeeded", args)
		}
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-h"}, &out, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
	}
}

func TestListPresets(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-list-presets"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 5 || !strings.Contains(out.String(), `"name":"overloaded"`) {
		t.Errorf("presets:\n%s", out.String())
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Errorf("not JSON: %s", l)
		}
	}
}
