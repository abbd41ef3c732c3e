package tpsmeter

import (
	"context"
	"math"
	"testing"
	"time"
)

// TestPerChunkSmallCountsNeverOverflow: the small tokens-per-chunk counts
// are moved to the sketch before one would wrap, and all of them reach the
// Result; a chunk of more tokens than the small counts cover goes to the
// sketch directly.
func TestPerChunkSmallCountsNeverOverflow(t *testing.T) {
	m := New()
	_, rec := m.Start(context.Background(), RequestInfo{Model: "gpt-4o"})
	at := rec.StartTime()
	for _, text := range []string{"Hello", " world", " and", " more"} {
		at = at.Add(10 * time.Millisecond)
		rec.Chunk(at)
		rec.Content(0, text)
		rec.EndChunk()
	}
	// As if 2^32-1 chunks had been credited one token each (in place of
	// the three taken so far; the fourth is still pending): the next
	// one-token sample must move that count to the sketch first.
	if rec.perChunkSmall[1] != 3 {
		t.Fatalf("small counts %v, want 3 one-token chunks", rec.perChunkSmall)
	}
	rec.perChunkSmall[1] = math.MaxUint32
	at = at.Add(10 * time.Millisecond)
	rec.Chunk(at)
	rec.Content(0, " again")
	rec.EndChunk()
	at = at.Add(10 * time.Millisecond)
	rec.Chunk(at)
	rec.Content(0, " one two three four five six seven eight nine ten")
	rec.EndChunk()
	r := rec.End(at, nil)
	// 2^32-1 + " more", " again" and the 10-word chunk.
	want := int64(math.MaxUint32) + 3
	if r.TokensPerChunk.Count != want {
		t.Errorf("TokensPerChunk.Count = %d, want %d", r.TokensPerChunk.Count, want)
	}
	if r.TokensPerChunk.Max < 8 {
		t.Errorf("TokensPerChunk.Max = %v, want the 10-word chunk's tokens", r.TokensPerChunk.Max)
	}
}
