package backfill

import (
	"fmt"
	"io"
	"time"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/config"
	keyplan "github.com/onchain-exporter/onchain_exporter/plan"
)

// DryRun prints the calls a run would make, and makes none; it needs no
// target (Output or RemoteWrite): per series the first call and, for
// fixed windows, the pages after it; for block windows the number of
// pages after it, estimated from the chain's block spacing
// (budget.BlockSpacing), since the heights they ask for are known from
// the answers. Series an earlier run wrote (progress file) are listed as
// such. cfg is the configuration as loaded: "all" is resolved by listing
// calls that a dry run does not make either.
func DryRun(w io.Writer, cfg *config.Config, o Options) error {
	o.setDefaults()
	prog, tuples, err := prepare(cfg, &o, true)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "# backfill from %s to %s into %s\n", o.From.Format(time.RFC3339), o.To.Format(time.RFC3339), o.target())
	if err := outputAllowed(prog, o); err != nil {
		fmt.Fprintf(w, "# a run would stop here, before any call: %v\n", err)
	}
	if cfg.APIs[config.APIData] != nil {
		if o.Plan != nil {
			fmt.Fprintf(w, "# the key's plan: %s; each series starts no earlier than its window's history on it\n", o.Plan.Name)
		} else {
			fmt.Fprintln(w, "# the key's plan is not known here: --from is not clamped below; a run reads the plan first and starts each series no earlier than its window's history on it")
		}
	}
	sh := shares(cfg)
	for _, api := range config.APINames {
		switch s, ok := sh[api]; {
		case ok && s.left < 1:
			fmt.Fprintf(w, "# %s: %s: a run calls nothing of it, not even its listings\n", api, s)
		case ok:
			fmt.Fprintf(w, "# %s: %s, paced over the UTC day\n", api, s)
		}
	}
	calls, series, estimated := 0, 0, 0
	listed := map[*config.Entry]bool{}
	for _, t := range tuples {
		if s, ok := sh[t.API]; ok && s.left < 1 {
			continue
		}
		if p := unresolved(t); p != "" {
			if !listed[t.Entry] {
				listed[t.Entry] = true
				fmt.Fprintf(w, "# %s (line %d): %s: all is resolved by the API's listing call first; its series are known after it\n", t.Entry.Key, t.Entry.Line, p)
				calls++
			}
			continue
		}
		series++
		if _, ok := prog.file.Series[t.Key]; ok {
			fmt.Fprintf(w, "# written by an earlier run: %s %s?%s\n", t.API, t.Path, t.Query().Encode())
			continue
		}
		win := keyplan.WindowDuration(t.Window)
		shift := o.Stamp.shift(t, win)
		from, clamped, why := fromFor(t, o.Plan, o.From, o.To.Add(-shift), o.Now())
		if why != nil {
			fmt.Fprintf(w, "# not called, the key's plan refuses it: %s %s?%s: %v\n", t.API, t.Path, t.Query().Encode(), why)
			continue
		}
		if clamped {
			fmt.Fprintf(w, "# %s\n", clampNote(t, o.Plan, from))
		}
		p := pagingFor(t, from, o.To.Add(-shift))
		rows := expectedRows(t, from, p.to)
		fmt.Fprintln(w, describeCall(t, p.query(t, p.limit, nil)))
		calls++
		switch {
		case rows < 0:
			if more, basis := morePages(t, p); p.ranged && p.limit > 0 {
				estimated += more
				calls += more
				fmt.Fprintf(w, "#   and about %d more pages before it by to=, %d rows a page: %s\n", more, p.limit, basis)
			}
		case p.ranged && p.limit > 0:
			page := time.Duration(p.limit) * win
			for to := p.to.Add(-page); rows > p.limit; rows, to = rows-p.limit, to.Add(-page) {
				fmt.Fprintln(w, describeCall(t, p.query(t, p.limit, &cursor{time: to.Add(win)})))
				calls++
			}
		}
	}
	fmt.Fprintf(w, "# %d series, %d calls", series, calls)
	if estimated > 0 {
		fmt.Fprintf(w, " (%d of them pages of block series, estimated from their chains' block spacing)", estimated)
	}
	fmt.Fprintln(w)
	return nil
}

// morePages estimates the pages after the first of a ranged series whose
// rows cannot be counted from its window (block rows), and says on what
// basis. A chain whose spacing is not known offline is counted at
// Ethereum's 12 s, the fastest the upstream is known to serve.
func morePages(t *config.Tuple, p paging) (int, string) {
	chain, every, ok := budget.BlockSpacing(t)
	basis := fmt.Sprintf("%s blocks, one every %s", chain, every)
	if !ok {
		every = 12 * time.Second
		basis = fmt.Sprintf("the block spacing of %s is not known offline: counted at one block every %s, as Ethereum's", chain, every)
	}
	span := p.to.Sub(p.from)
	if span < 0 {
		return 0, basis
	}
	blocks := int64(span/every) + 1
	pages := (blocks + int64(p.limit) - 1) / int64(p.limit)
	return int(pages - 1), fmt.Sprintf("about %d %s", blocks, basis)
}

// unresolved names the parameter of a tuple still listing "all".
func unresolved(t *config.Tuple) string {
	for name, v := range t.Params.All() {
		if v == config.All {
			return name
		}
	}
	return ""
}
