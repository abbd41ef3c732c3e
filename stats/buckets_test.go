package stats_test

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/tpsmeter/tpsmeter/stats"
)

func TestDefaultLengthBuckets(t *testing.T) {
	b := stats.DefaultLengthBuckets()
	for _, tc := range []struct {
		tokens int
		want   string
	}{
		{math.MinInt, "short"}, {-1, "short"}, {0, "short"}, {99, "short"},
		{100, "medium"}, {499, "medium"},
		{500, "long"}, {100000, "long"}, {math.MaxInt, "long"},
	} {
		if got := b.Bucket(tc.tokens); got != tc.want {
			t.Errorf("Bucket(%d) = %q, want %q", tc.tokens, got, tc.want)
		}
		if got := (stats.LengthBuckets{}).Bucket(tc.tokens); got != tc.want {
			t.Errorf("zero LengthBuckets: Bucket(%d) = %q, want %q", tc.tokens, got, tc.want)
		}
	}
	b.Names[0] = "mutated"
	if stats.DefaultLengthBuckets().Names[0] != "short" {
		t.Fatal("DefaultLengthBuckets shares its slices")
	}
}

func TestNewLengthBuckets(t *testing.T) {
	for _, tc := range []struct {
		name   string
		edges  []int
		names  []string
		want   []string
		probes map[int]string
		err    error
	}{
		{name: "generated names", edges: []int{100, 500}, want: []string{"<100", "100-499", ">=500"},
			probes: map[int]string{99: "<100", 100: "100-499", 499: "100-499", 500: ">=500"}},
		{name: "one edge", edges: []int{1000}, want: []string{"<1000", ">=1000"},
			probes: map[int]string{999: "<1000", 1000: ">=1000"}},
		{name: "one-token bucket", edges: []int{1, 2, 10}, want: []string{"<1", "1", "2-9", ">=10"},
			probes: map[int]string{0: "<1", 1: "1", 2: "2-9", 9: "2-9", 10: ">=10"}},
		{name: "custom names", edges: []int{50, 200, 2000}, names: []string{"tiny", "small", "big", "huge"},
			want: []string{"tiny", "small", "big", "huge"}, probes: map[int]string{49: "tiny", 50: "small", 1999: "big", 2000: "huge"}},
		{name: "no edges", edges: nil, err: stats.ErrInvalidBuckets},
		{name: "equal edges", edges: []int{100, 100}, err: stats.ErrInvalidBuckets},
		{name: "decreasing edges", edges: []int{500, 100}, err: stats.ErrInvalidBuckets},
		{name: "too few names", edges: []int{100, 500}, names: []string{"a", "b"}, err: stats.ErrInvalidBuckets},
		{name: "too many names", edges: []int{100}, names: []string{"a", "b", "c"}, err: stats.ErrInvalidBuckets},
		{name: "empty name", edges: []int{100}, names: []string{"a", ""}, err: stats.ErrInvalidBuckets},
		{name: "repeated name", edges: []int{100}, names: []string{"a", "a"}, err: stats.ErrInvalidBuckets},
	} {
		t.Run(tc.name, func(t *testing.T) {
			edges, names := slices.Clone(tc.edges), slices.Clone(tc.names)
			b, err := stats.NewLengthBuckets(edges, names)
			if !errors.Is(err, tc.err) {
				t.Fatalf("error = %v, want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			if !slices.Equal(b.Names, tc.want) || !slices.Equal(b.Edges, tc.edges) {
				t.Fatalf("got %v %v, want %v %v", b.Edges, b.Names, tc.edges, tc.want)
			}
			for tokens, want := range tc.probes {
				if got := b.Bucket(tokens); got != want {
					t.Errorf("Bucket(%d) = %q, want %q", tokens, got, want)
				}
			}
			if len(edges) > 0 {
				edges[0] = -1 // the caller's slices are copied
			}
			if len(names) > 0 {
				names[0] = "changed"
			}
			if b.Edges[0] == -1 || b.Names[0] == "changed" {
				t.Fatal("NewLengthBuckets kept the caller's slices")
			}
		})
	}
}

func TestLengthBucketsInvalidLiteral(t *testing.T) {
	b := stats.LengthBuckets{Edges: []int{10, 20}, Names: []string{"a"}}
	if got := b.Bucket(15); got != stats.OtherBucket {
		t.Fatalf("Bucket on a mismatched literal = %q, want %q", got, stats.OtherBucket)
	}
}

func TestBucketDoesNotAllocate(t *testing.T) {
	b := stats.DefaultLengthBuckets()
	if n := testing.AllocsPerRun(1000, func() { _ = b.Bucket(250) }); n != 0 {
		t.Fatalf("Bucket allocates %v times", n)
	}
}
