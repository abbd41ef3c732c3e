package tokenize_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	tiktoken "github.com/pkoukk/tiktoken-go"

	"github.com/tpsmeter/tpsmeter/tokenize"
)

// offlineChildEnv makes the test binary act as the child process of
// TestWorksOffline instead of running tests.
const offlineChildEnv = "TOKENIZE_OFFLINE_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(offlineChildEnv) != "" {
		os.Exit(offlineChild())
	}
	os.Exit(m.Run())
}

// offlineText is counted by the child process.
const offlineText = "Offline: it's 2024, 中文, Привет, 👍🏽 and <|endoftext|>\n"

// TestWorksOffline runs the package in a fresh process in which every
// network path is broken (an unusable proxy, an http.DefaultTransport and a
// resolver that fail and record each attempt, an empty tiktoken cache
// directory). There it must build every encoding and count exactly, without
// a single network attempt; and pkoukk/tiktoken-go's global loader must
// still be its default, downloading one, as the package never calls
// tiktoken.SetBpeLoader: asked for an encoding, pkoukk must try the network
// and fail.
func TestWorksOffline(t *testing.T) {
	want := map[string]int{}
	for _, name := range tokenize.Encodings() {
		want[name] = oracleCount(t, name, offlineText)
	}
	wantJSON, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		offlineChildEnv+"="+string(wantJSON),
		"HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9", "ALL_PROXY=http://127.0.0.1:9", "NO_PROXY=",
		"http_proxy=http://127.0.0.1:9", "https_proxy=http://127.0.0.1:9", "no_proxy=",
		"TIKTOKEN_CACHE_DIR="+cache, "DATA_GYM_CACHE_DIR="+cache,
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("offline child failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "offline child ok") {
		t.Fatalf("offline child did not report success:\n%s", out)
	}
	t.Logf("%s", out)
}

// offlineChild is the body of the child process; it returns the exit code.
func offlineChild() int {
	var want map[string]int
	if err := json.Unmarshal([]byte(os.Getenv(offlineChildEnv)), &want); err != nil {
		fmt.Println("bad expectations:", err)
		return 2
	}
	var attempts atomic.Int64
	http.DefaultTransport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		attempts.Add(1)
		return nil, errors.New("network disabled by test: " + r.URL.String())
	})
	net.DefaultResolver = &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		attempts.Add(1)
		return nil, errors.New("DNS disabled by test")
	}}
	fail := func(format string, args ...any) int {
		fmt.Printf(format+"\n", args...)
		return 1
	}
	for name, n := range want {
		c, err := tokenize.NewCounter(name)
		if err != nil {
			return fail("NewCounter(%s) offline: %v", name, err)
		}
		for _, r := range offlineText {
			c.Add(string(r))
		}
		if c.Count() != n {
			return fail("%s offline: Count = %d, want %d", name, c.Count(), n)
		}
	}
	if a := attempts.Load(); a != 0 {
		return fail("tokenize made %d network attempts", a)
	}
	// pkoukk's loader must be untouched: its default loader downloads, so
	// here it must try the network and fail.
	if _, err := tiktoken.GetEncoding("r50k_base"); err == nil {
		return fail("pkoukk/tiktoken-go loaded an encoding offline: its global loader was replaced")
	}
	if attempts.Load() == 0 {
		return fail("pkoukk/tiktoken-go failed without trying its default (downloading) loader")
	}
	fmt.Println("offline child ok: counted " + strconv.Itoa(len(want)) + " encodings with no network attempt; pkoukk's default loader is untouched")
	return 0
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestImports checks the package's own imports: the standard library minus
// networking, and only the embedded data of pkoukk/tiktoken-go-loader,
// never pkoukk/tiktoken-go itself (which downloads and has a global loader).
func TestImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			switch {
			case path == "github.com/pkoukk/tiktoken-go-loader/assets":
			case strings.Contains(path, "."):
				t.Errorf("%s imports %s: only the embedded tokenizer data may come from outside the standard library", f, path)
			case path == "net" || strings.HasPrefix(path, "net/") || path == "os/exec":
				t.Errorf("%s imports %s", f, path)
			}
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no source files found")
	}
}
