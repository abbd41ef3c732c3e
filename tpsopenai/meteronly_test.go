package tpsopenai_test

import (
	"context"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/tpsmeter/tpsmeter"
	"github.com/tpsmeter/tpsmeter/tpsopenai"
)

type sliceStream struct {
	c []openai.ChatCompletionChunk
	i int
}

func (s *sliceStream) Next() bool                          { s.i++; return s.i <= len(s.c) }
func (s *sliceStream) Current() openai.ChatCompletionChunk { return s.c[s.i-1] }
func (s *sliceStream) Err() error                          { return nil }
func (s *sliceStream) Close() error                        { return nil }

func decoded() []openai.ChatCompletionChunk {
	s := rawStream()
	var out []openai.ChatCompletionChunk
	for s.Next() {
		out = append(out, s.Current())
	}
	return out
}

// BenchmarkMeterOnly isolates the meter's per-chunk work: the chunks are
// decoded once, outside the loop, and replayed from memory.
func BenchmarkMeterOnly(b *testing.B) {
	chunks := decoded()
	m := tpsmeter.New()
	b.Run("mode=raw", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s := &sliceStream{c: chunks}
			n := 0
			for s.Next() {
				n += len(s.Current().Choices)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(chunks)), "ns/chunk")
	})
	b.Run("mode=metered", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, rec := m.Start(context.Background(), tpsmeter.RequestInfo{Model: "gpt-4o-mini"})
			s := tpsmeter.Wrap[openai.ChatCompletionChunk](rec, &sliceStream{c: chunks}, tpsopenai.ExtractChat)
			n := 0
			for s.Next() {
				n += len(s.Current().Choices)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(chunks)), "ns/chunk")
	})
}
