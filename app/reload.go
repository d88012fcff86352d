package app

import (
	"context"
	"fmt"
	"net/http"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// reloadLoop reloads the configuration on POST /-/reload and Reload, one
// at a time.
func reloadLoop(ctx context.Context, logger log.Logger, safe *config.SafeConfig, requests <-chan chan error) {
	for {
		var reply chan error
		select {
		case <-ctx.Done():
			return
		case reply = <-requests:
		}
		err := safe.Reload()
		if err != nil {
			level.Error(logger).Log("msg", "configuration reload failed; the previous configuration stays in force", "err", err)
		} else {
			level.Info(logger).Log("msg", "configuration reloaded", "tuples", len(safe.Get().Tuples))
		}
		reply <- err
	}
}

func reloadHandler(requests chan<- chan error, stopping <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost && r.Method != http.MethodPut {
			w.Header().Set("Allow", "POST, PUT")
			http.Error(w, "use POST to reload the configuration", http.StatusMethodNotAllowed)
			return
		}
		reply := make(chan error, 1)
		select {
		case requests <- reply:
		case <-stopping:
			http.Error(w, "shutting down: not reloaded", http.StatusServiceUnavailable)
			return
		case <-r.Context().Done():
			return
		}
		if err := <-reply; err != nil {
			http.Error(w, fmt.Sprintf("failed to reload config: %s", err), http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, "OK")
	}
}
