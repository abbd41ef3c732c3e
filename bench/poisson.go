package bench

import (
	"context"
	"math/rand/v2"
	"time"
)

// Poisson generates the arrival times of an open-loop load: a Poisson
// process of Rate arrivals per second, as offsets from the phase start.
// The same seed gives the same schedule. A Poisson is not safe for
// concurrent use.
type Poisson struct {
	rate float64
	rng  *rand.Rand
	at   float64 // seconds
}

// NewPoisson returns a schedule of rate arrivals per second (rate > 0).
func NewPoisson(rate float64, seed uint64) *Poisson {
	return &Poisson{rate: rate, rng: rand.New(rand.NewPCG(seed, 0x706f6973))}
}

// Next returns the offset of the next arrival: the previous one plus an
// exponentially distributed gap of mean 1/rate.
func (p *Poisson) Next() time.Duration {
	p.at += p.rng.ExpFloat64() / p.rate
	return time.Duration(p.at * float64(time.Second))
}

// sleepCtx sleeps for d or until ctx is done (returning its error).
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
