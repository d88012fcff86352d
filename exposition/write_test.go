package exposition

import (
	"strings"
	"testing"

	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// omClashes picks the counter whose OpenMetrics family name is another
// family's name, and only it.
func TestOMClashes(t *testing.T) {
	counter, gauge := "COUNTER", "GAUGE"
	mk := func(name, typ string) *block {
		var b strings.Builder
		b.WriteString("# TYPE " + name + " " + strings.ToLower(typ) + "\n" + name + " 1\n")
		mf := testtool.Families(t, b.String())[name]
		return &block{name: name, mf: mf}
	}
	pair, pairGauge := mk("x_total", counter), mk("x", gauge)
	alone := mk("y_total", counter)
	gaugeTotal := mk("z_total", gauge)
	z := mk("z", gauge)
	got := omClashes([]*block{pairGauge, pair, alone, gaugeTotal, z})
	if !got[pair] || len(got) != 1 {
		t.Errorf("omClashes: %v, want only x_total", got)
	}
}
