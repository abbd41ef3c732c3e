package bench

import (
	"sync"
	"time"
)

// schedLagPeriod is the timer period of the scheduling-lag monitor.
const schedLagPeriod = 10 * time.Millisecond

// schedLagMonitor measures how late a periodic timer fires in this
// process: a direct reading of how busy the benchmark machine is (CPU
// starvation, GC pauses), which delays every timestamp the meter takes.
type schedLagMonitor struct {
	mu   sync.Mutex
	dist *Dist
	stop chan struct{}
	done chan struct{}
}

func startSchedLag(seed uint64) *schedLagMonitor {
	m := &schedLagMonitor{dist: NewDist(DefaultSampleCap, seed), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		t := time.NewTimer(schedLagPeriod)
		defer t.Stop()
		for {
			t0 := time.Now()
			t.Reset(schedLagPeriod)
			select {
			case <-m.stop:
				return
			case <-t.C:
			}
			lag := time.Since(t0) - schedLagPeriod
			m.mu.Lock()
			m.dist.Add(max(lag, 0).Seconds())
			m.mu.Unlock()
		}
	}()
	return m
}

// finish stops the monitor and returns its distribution (seconds).
func (m *schedLagMonitor) finish() *Dist {
	close(m.stop)
	<-m.done
	return m.dist
}
