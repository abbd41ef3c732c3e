package tpsotel

import "sync"

// modelCap keeps the first max distinct model names and maps every later
// new name to OverflowModel. It is consulted only when an attribute set is
// built (once per distinct request shape, not per chunk), so a mutex is
// cheap enough. It is safe for concurrent use.
type modelCap struct {
	mu    sync.Mutex
	max   int
	known map[string]struct{}
}

func newModelCap(max int) *modelCap {
	return &modelCap{max: max, known: make(map[string]struct{})}
}

// name returns model if it is among the first max distinct names, "" for
// "", and OverflowModel otherwise.
func (c *modelCap) name(model string) string {
	if model == "" {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.known[model]; ok {
		return model
	}
	if len(c.known) >= c.max {
		return OverflowModel
	}
	c.known[model] = struct{}{}
	return model
}
