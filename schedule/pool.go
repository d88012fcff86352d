package schedule

import (
	"math"
	"slices"
	"time"
)

// The spread of the release offsets pooled across the keys of one API and
// window (issue 43): a key's rows say where its releases lie, but how
// widely they spread is the provider's pipeline, which the endpoints of
// one window share. A day key knows 3 or 4 rows; its API and window tens.
//
// The model: key j's offsets are a_j + L·u, u uniform on [0, 1], a
// location a_j of its own and a width L shared. With n_j rows of range
// S_j and the invariant prior (flat in each a_j, 1/L in L), the width's
// posterior is
//
//	p(L) ∝ 1/L · Π_j (L - S_j)₊ / L^n_j
//
// and the next row of key i passes its latest M_i by t with probability
//
//	P_i(t) = ∫ p(L) · (L - S_i - t)₊² / (2·L·(L - S_i)) dL
//
// The margin is the t for which P_i(t) = dueFalseShare. The prior is the
// right Haar measure of the model's group (a shift per key, one scale),
// so the chance is also the frequentist one: one row in a thousand past
// due whatever the locations and width (TestPooledFalseShare).
//
// Guards: a key whose range is unlikely under the others' width, wider or
// narrower (habit), is another habit and keeps its own rule, as does
// every key while fewer than poolKeys keys of 2 rows or more fit. The
// pool reads at most poolMax keys.

// poolKeys is the least number of keys of one API and window, each with 2
// rows found on time or more, for their spread to be pooled.
const poolKeys = 3

// poolMax is the most keys the pool reads.
const poolMax = 32

// poolNarrow and poolWide are the chances under which a key's range is
// taken as another habit, narrower or wider.
const poolNarrow, poolWide = 0.01, 1e-3

// span is the range and count of a key's rows found on time.
type span struct {
	s float64 // seconds
	n int
}

func spanOf(rs []time.Duration) span {
	if len(rs) < 2 {
		return span{n: len(rs)}
	}
	return span{s: (slices.Max(rs) - slices.Min(rs)).Seconds(), n: len(rs)}
}

// below is the chance that the range of n rows uniform over a width l is
// at most s: the range's share of l is Beta(n-1, 2), of distribution
// n·u^(n-1) - (n-1)·u^n.
func (sp span) below(l float64) float64 {
	u := min(sp.s/l, 1)
	n := float64(sp.n)
	return n*math.Pow(u, n-1) - (n-1)*math.Pow(u, n)
}

// poolGrid is how many widths the posterior is summed over.
const poolGrid = 400

// posterior is the posterior of the width on a grid L = l0·e^x, x in
// (0, X], weights summing to 1: l0 is the largest range, and past X the
// posterior (falling as e^(-x·Σ(n_j-1)) at most) holds under e^-20 of
// the mass. False when nothing spreads.
func posterior(spans []span, ls, ps *[poolGrid]float64) bool {
	l0, decay := 0.0, 0.0
	for _, sp := range spans {
		l0 = max(l0, sp.s)
		decay += float64(sp.n - 1)
	}
	if l0 <= 0 || decay <= 0 {
		return false
	}
	xMax := 20 / decay
	peak := math.Inf(-1)
	for k := range poolGrid {
		x := xMax * (float64(k) + 0.5) / poolGrid
		l := l0 * math.Exp(x)
		// log of p(L)·dL/dx = log of Π (L - S_j) / L^n_j (the 1/L of the
		// prior and the L of dL = L·dx cancel).
		lp := 0.0
		for _, sp := range spans {
			lp += math.Log(l-sp.s) - float64(sp.n)*math.Log(l)
		}
		ls[k], ps[k] = l, lp
		peak = max(peak, lp)
	}
	total := 0.0
	for k := range ps {
		ps[k] = math.Exp(ps[k] - peak)
		total += ps[k]
	}
	for k := range ps {
		ps[k] /= total
	}
	return true
}

// habit says whether a key's range is another habit than the others'
// rows say: narrower, wider, or neither. The chance that a range of its
// rows is at most its own is Σ p(L)·below(L) under their posterior.
func (sp span) habit(others []span) (narrower, wider bool) {
	var ls, ps [poolGrid]float64
	if sp.n < 2 || !posterior(others, &ls, &ps) {
		return false, false
	}
	at := 0.0
	for k, l := range ls {
		at += ps[k] * sp.below(l)
	}
	return at < poolNarrow, 1-at < poolWide
}

// pooledTolerance is what the due time of a key allows past its learned
// release when its rows spread as its pool's do: in [2 min, w/12], as
// DueTolerance.
func pooledTolerance(own span, others []span, w time.Duration) time.Duration {
	most, least := max(w/12, 2*time.Minute), 2*time.Minute
	var ls, ps [poolGrid]float64
	if own.n < 2 {
		return most
	}
	if !posterior(append(slices.Clip(others), own), &ls, &ps) {
		return least // every row found at one offset: nothing spreads
	}
	pass := func(t float64) float64 {
		p := 0.0
		for k, l := range ls {
			if d := l - own.s - t; d > 0 {
				p += ps[k] * d * d / (2 * l * (l - own.s))
			}
		}
		return p
	}
	lo, hi := least.Seconds(), most.Seconds()
	if pass(hi) > dueFalseShare {
		return most
	}
	if pass(lo) <= dueFalseShare {
		return least
	}
	for range 24 { // to a second in 2 h
		mid := (lo + hi) / 2
		if pass(mid) > dueFalseShare {
			lo = mid
		} else {
			hi = mid
		}
	}
	return time.Duration(math.Ceil(hi)) * time.Second
}

// duePool is the keys of one API and window, for the spread they share.
type duePool struct {
	w    time.Duration
	keys []*Estimate // in the order they were made
	// version counts the changes of the keys' Released; built is the
	// version the pool was made at.
	version, built int
	cands          []*Estimate // the first poolMax keys of 2 rows or more
	spans          []span      // theirs
	narrow         []bool      // whether each is another, narrower habit
	wide           []bool      // whether each is another, wider habit
	margins        map[*Estimate]poolMargin
}

type poolMargin struct {
	version int
	d       time.Duration
}

func newDuePool(w time.Duration) *duePool {
	return &duePool{w: w, built: -1, margins: map[*Estimate]poolMargin{}}
}

// changed notes that e's Released changed: the pool is made again when e
// is or may become one of the keys it reads, else only e's margin is.
func (p *duePool) changed(e *Estimate) {
	if len(p.cands) < poolMax || len(e.Released) <= 2 || slices.Contains(p.cands, e) {
		p.version++
		return
	}
	delete(p.margins, e)
}

// build reads the first poolMax keys of 2 rows or more and says which
// are another habit than the others.
func (p *duePool) build() {
	p.built, p.cands, p.spans = p.version, p.cands[:0], p.spans[:0]
	for _, e := range p.keys {
		if len(e.Released) >= 2 {
			p.cands, p.spans = append(p.cands, e), append(p.spans, spanOf(e.Released))
			if len(p.cands) == poolMax {
				break
			}
		}
	}
	p.narrow, p.wide = make([]bool, len(p.spans)), make([]bool, len(p.spans))
	if len(p.spans) < poolKeys {
		return
	}
	// Each key is judged by the others but those the last pass found
	// wider, which would make the others look narrow. Three passes at most.
	others := make([]span, 0, len(p.spans))
	wide := make([]bool, len(p.spans))
	for range 3 {
		for i, sp := range p.spans {
			others = others[:0]
			for j, o := range p.spans {
				if j != i && !wide[j] {
					others = append(others, o)
				}
			}
			p.narrow[i], p.wide[i] = sp.habit(others)
		}
		if slices.Equal(wide, p.wide) {
			break
		}
		copy(wide, p.wide)
	}
}

// margin is the pooled tolerance of the pool's key e, from the other keys
// of one habit; 0 when fewer than poolKeys keys are, or e's rows spread
// wider than theirs.
func (p *duePool) margin(e *Estimate) time.Duration {
	if p.built != p.version {
		p.build()
	}
	if m, ok := p.margins[e]; ok && m.version == p.version {
		return m.d
	}
	own := spanOf(e.Released)
	var others []span
	in, wide := false, false
	for i, o := range p.cands {
		switch {
		case o == e:
			in, wide = true, p.wide[i]
		case !p.narrow[i] && !p.wide[i]:
			others = append(others, p.spans[i])
		}
	}
	if !in && own.n >= 2 {
		_, wide = own.habit(others) // a key past the first poolMax
	}
	d := time.Duration(0)
	if own.n >= 2 && !wide && len(others)+1 >= poolKeys {
		d = pooledTolerance(own, others, p.w)
	}
	p.margins[e] = poolMargin{p.version, d}
	return d
}
