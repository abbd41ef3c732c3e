package tpsmeter_test

import (
	"sync"
	"testing"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// The oracle for token counts in tests is pkoukk/tiktoken-go, an
// implementation independent of package tokenize, with its embedded ranks
// (set here, in the test process only: the library never touches pkoukk's
// global loader).
var (
	oracleOnce sync.Once
	oracleMu   sync.Mutex
	oracles    = map[string]*tiktoken.Tiktoken{}
)

func count(t testing.TB, encoding, text string) int {
	t.Helper()
	oracleOnce.Do(func() { tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader()) })
	oracleMu.Lock()
	defer oracleMu.Unlock()
	enc, ok := oracles[encoding]
	if !ok {
		var err error
		enc, err = tiktoken.GetEncoding(encoding)
		if err != nil {
			t.Fatalf("oracle encoding %s: %v", encoding, err)
		}
		oracles[encoding] = enc
	}
	return len(enc.EncodeOrdinary(text))
}
