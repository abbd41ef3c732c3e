package llmsim

import (
	"context"
	"net/http"
	"time"
)

// waiter is a request queued for a slot.
type waiter struct {
	ch       chan struct{}
	granted  bool
	canceled bool
}

// grant is what admission tells a request that may generate.
type grant struct {
	at        time.Time     // when it got the slot (generation start)
	cold      time.Duration // cold-start delay to add to its TTFT
	others    int           // requests generating when it started
	queueWait time.Duration
}

// errQueueFull is the 429 of a full queue.
func (s *Server) errQueueFull() *apiError {
	return &apiError{status: http.StatusTooManyRequests, typ: typeRateLimit, code: "rate_limit_exceeded",
		retryAfter: s.profile.RetryAfter,
		message:    "The server is overloaded: all generation slots are busy and the queue is full. Please retry after a short wait."}
}

// acquire waits for a generation slot. It returns a 429 error if the queue is
// full, or ctx's error (as a nil grant and nil apiError) if ctx ends first.
func (s *Server) acquire(ctx context.Context, arrived time.Time) (*grant, *apiError, error) {
	s.amu.Lock()
	slots, limit := s.profile.Slots, s.profile.QueueLimit
	if slots == 0 || s.busy < slots {
		s.busy++
		g := s.startLocked(arrived, false)
		s.amu.Unlock()
		return g, nil, nil
	}
	if limit == -1 || (limit > 0 && len(s.waiters) >= limit) {
		s.amu.Unlock()
		return nil, s.errQueueFull(), nil
	}
	w := &waiter{ch: make(chan struct{})}
	s.waiters = append(s.waiters, w)
	s.st.queued.Add(1)
	s.amu.Unlock()

	select {
	case <-w.ch:
		s.amu.Lock()
		// The slot may have been freed by a shutdown that has not yet
		// cancelled this request's context (context.AfterFunc runs
		// asynchronously): a server that is shutting down starts nothing.
		if err := context.Cause(s.baseCtx); err != nil || ctx.Err() != nil {
			s.passSlotLocked()
			s.amu.Unlock()
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			return nil, nil, err
		}
		g := s.startLocked(arrived, true)
		s.amu.Unlock()
		return g, nil, nil
	case <-ctx.Done():
		s.amu.Lock()
		if w.granted {
			// the slot was handed over just now: pass it on
			s.passSlotLocked()
			s.amu.Unlock()
		} else {
			w.canceled = true
			s.removeWaiterLocked(w)
			s.amu.Unlock()
		}
		return nil, nil, ctx.Err()
	}
}

func (s *Server) removeWaiterLocked(w *waiter) {
	for i, x := range s.waiters {
		if x == w {
			copy(s.waiters[i:], s.waiters[i+1:])
			s.waiters[len(s.waiters)-1] = nil
			s.waiters = s.waiters[:len(s.waiters)-1]
			s.st.queued.Add(-1)
			return
		}
	}
}

// startLocked records the start of a generation and decides the cold start.
// A request that did not queue starts at its arrival, so its schedule does
// not shift by the time spent reading and checking it.
func (s *Server) startLocked(arrived time.Time, queued bool) *grant {
	now := s.clock.Now()
	others := int(s.st.generating.Load())
	g := &grant{at: arrived, others: others}
	if queued {
		g.at, g.queueWait = now, max(now.Sub(arrived), 0)
	}
	p := s.profile
	if p.ColdStartPenalty > 0 {
		idle := others == 0 && p.ColdStartAfter > 0 && now.Sub(s.idleSince) > p.ColdStartAfter
		switch {
		case (!s.warmed || idle) && !now.Before(s.loadingUntil):
			s.loadingUntil = now.Add(p.ColdStartPenalty)
			g.cold = p.ColdStartPenalty
			s.st.coldStarts.Add(1)
		case now.Before(s.loadingUntil):
			g.cold = s.loadingUntil.Sub(now)
		}
		s.warmed = true
	}
	s.st.generating.Add(1)
	return g
}

// releaseSlot ends a generation: the slot goes to the first live waiter.
func (s *Server) releaseSlot() {
	s.amu.Lock()
	defer s.amu.Unlock()
	if s.st.generating.Add(-1) == 0 {
		s.idleSince = s.clock.Now()
	}
	s.passSlotLocked()
}

// passSlotLocked gives a freed slot to the first live waiter, or frees it.
func (s *Server) passSlotLocked() {
	for len(s.waiters) > 0 {
		w := s.waiters[0]
		copy(s.waiters, s.waiters[1:])
		s.waiters[len(s.waiters)-1] = nil
		s.waiters = s.waiters[:len(s.waiters)-1]
		s.st.queued.Add(-1)
		if w.canceled {
			continue
		}
		w.granted = true
		close(w.ch)
		return // the slot stays busy, now held by w
	}
	if s.busy > 0 {
		s.busy--
	}
}
