package llmsim

import (
	"sync"
	"testing"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

var (
	encOnce sync.Once
	encs    map[string]*tiktoken.Tiktoken
	encErr  error
)

// encodings returns cl100k_base and o200k_base, loaded from the ranks
// embedded in tiktoken-go-loader (nothing is downloaded).
func encodings(t testing.TB) map[string]*tiktoken.Tiktoken {
	t.Helper()
	encOnce.Do(func() {
		tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
		encs = map[string]*tiktoken.Tiktoken{}
		for _, name := range []string{EncodingCL100k, EncodingO200k} {
			e, err := tiktoken.GetEncoding(name)
			if err != nil {
				encErr = err
				return
			}
			encs[name] = e
		}
	})
	if encErr != nil {
		t.Fatalf("loading tiktoken encodings: %v", encErr)
	}
	return encs
}
