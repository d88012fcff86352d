package demo

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// FaultHandler switches faults of the fake upstream: POST
// FaultPath?api=data&kind=Status500 (kind=None clears), to try alerts and
// dashboards by hand.
func FaultHandler(fake *fakeapi.Server) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "use POST", http.StatusMethodNotAllowed)
			return
		}
		api, kindName := r.URL.Query().Get("api"), r.URL.Query().Get("kind")
		kind, ok := parseFaultKind(kindName)
		if !ok {
			http.Error(w, fmt.Sprintf("unknown fault kind %q", kindName), http.StatusBadRequest)
			return
		}
		fake.SetFault(api, fakeapi.Fault{Kind: kind, PathPrefix: r.URL.Query().Get("path")})
		fmt.Fprintf(w, "fault %s on %s\n", strings.ToLower(kindName), api)
	})
}

// parseFaultKind finds a fault kind by its name; "None" clears.
func parseFaultKind(name string) (fakeapi.FaultKind, bool) {
	if strings.EqualFold(name, "none") {
		return fakeapi.FaultNone, true
	}
	for k := fakeapi.FaultNone; ; k++ {
		s := k.String()
		if strings.HasPrefix(s, "FaultKind(") {
			return 0, false
		}
		if strings.EqualFold(s, name) {
			return k, true
		}
	}
}
