package series

import (
	"fmt"
	"strings"
	"sync"
)

// Claims keeps every family to the owner (config.Tuple.LabelGroup),
// label set and type of its first claim, as one exposition needs: a
// tuple that would break that is refused the family. Safe for concurrent
// use.
type Claims struct {
	mu     sync.Mutex
	byName map[string]claim
}

type claim struct {
	owner, labels, typ string
}

// NewClaims returns a Claims with no family claimed.
func NewClaims() *Claims { return &Claims{byName: map[string]claim{}} }

// Claim gives family f with labelNames to owner, or says why another
// claim of it stands in the way.
func (c *Claims) Claim(owner string, f Family, labelNames []string) error {
	key := strings.Join(labelNames, ",")
	c.mu.Lock()
	defer c.mu.Unlock()
	prev, ok := c.byName[f.Name]
	switch {
	case !ok:
		c.byName[f.Name] = claim{owner: owner, labels: key, typ: f.Type}
		return nil
	case prev.owner != owner:
		return fmt.Errorf("family %s is already produced by %s; give one of the fields another name with fields.<name>.name", f.Name, prev.owner)
	case prev.labels != key:
		return fmt.Errorf("family %s already has labels {%s}, not {%s}", f.Name, prev.labels, key)
	case prev.typ != f.Type:
		return fmt.Errorf("family %s is already a %s", f.Name, prev.typ)
	}
	return nil
}
