package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/onchain-exporter/onchain_exporter/demo"
	"github.com/onchain-exporter/onchain_exporter/expand"
)

// Start serves /metrics, the probes, reloads and the page on the listen
// addresses, and starts the reload loop and background expansion. It
// returns once the addresses are bound (an error then: the caller calls
// Stop); what serving ends with later comes on Done.
func (a *App) Start() error {
	a.ctx, a.cancel = context.WithCancel(context.Background())
	a.reloads = make(chan chan error)
	a.served = make(chan error, 1)
	mux := http.NewServeMux()
	mux.Handle(a.opts.MetricsPath, promhttp.InstrumentMetricHandler(a.reg, a.exp))
	mux.HandleFunc("/-/healthy", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "Healthy") })
	mux.HandleFunc("/-/ready", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "Ready") })
	mux.HandleFunc("/-/reload", reloadHandler(a.reloads, a.ctx.Done()))
	if a.demo != nil {
		mux.Handle("/-/demo/fault", demo.FaultHandler(a.demo.Fake))
	}
	if a.opts.MetricsPath != "/" {
		mux.Handle("/", a.landing)
	}
	// Reloads and background expansion end before the collectors close
	// (Stop), so that none lands after the final save.
	a.background.Add(2)
	go func() { defer a.background.Done(); reloadLoop(a.ctx, a.logger, a.safe, a.reloads) }()
	go func() { defer a.background.Done(); a.expander.Maintain(a.ctx, expand.Refresh, a.safe.Refine) }()
	// The server's own messages (a TLS handshake refused, say) go through
	// the project's logger too: one time key, one format.
	a.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(a.slogger.Handler(), slog.LevelWarn)}
	listeners, err := a.listen()
	if err != nil {
		a.served <- err
		return err
	}
	a.serving = make(chan struct{})
	go func() {
		defer close(a.serving)
		if listeners == nil {
			a.served <- web.ListenAndServe(a.srv, a.opts.Web, a.slogger)
			return
		}
		err := web.ServeMultiple(listeners, a.srv, a.opts.Web, a.slogger)
		for _, l := range listeners {
			l.Close()
		}
		a.served <- err
	}()
	return nil
}

// listen binds the TCP listen addresses, so that Start says at once
// whether they can be served and Addr where. Socket activation and vsock
// addresses are left to web.ListenAndServe (nil listeners).
func (a *App) listen() ([]net.Listener, error) {
	w := a.opts.Web
	if w.WebSystemdSocket != nil && *w.WebSystemdSocket || w.WebListenAddresses == nil || len(*w.WebListenAddresses) == 0 {
		return nil, nil
	}
	for _, addr := range *w.WebListenAddresses {
		if strings.HasPrefix(addr, "vsock://") {
			return nil, nil
		}
	}
	var listeners []net.Listener
	for _, addr := range *w.WebListenAddresses {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			for _, l := range listeners {
				l.Close()
			}
			return nil, err
		}
		listeners = append(listeners, l)
	}
	a.addr = listeners[0].Addr().String()
	return listeners, nil
}

// Addr is the first address served (127.0.0.1:9799), once Start bound it;
// "" for socket activation and vsock.
func (a *App) Addr() string { return a.addr }

// Settle waits until the engines have done what is due at the clock's
// time: with a simulated Options.Clock, what a caller does after moving
// it.
func (a *App) Settle() { a.exp.Settle() }

// DueTolerance is what the due time of an endpoint's window allows past
// its learned release (collector.Exporter.DueTolerance), false while it
// has none.
func (a *App) DueTolerance(api, endpoint, window string) (time.Duration, bool) {
	return a.exp.DueTolerance(api, endpoint, window)
}

// Done has what serving ended with, when it ends before Stop: an address
// that cannot be served, a web configuration file that cannot be read.
func (a *App) Done() <-chan error { return a.served }

// Reload reads the configuration file again and puts it in force, as
// POST /-/reload does and one at a time with it; a bad file keeps the
// configuration in force. After Stop it reloads nothing.
func (a *App) Reload() error {
	if a.ctx == nil {
		return errors.New("not started: not reloaded")
	}
	reply := make(chan error, 1)
	select {
	case a.reloads <- reply:
	case <-a.ctx.Done():
		return errors.New("shutting down: not reloaded")
	}
	return <-reply
}

// Stop ends serving (the requests in flight are answered, for up to 5 s),
// the reload loop and background expansion, then closes what New started,
// last started first: the collectors' last save is the last write. It
// returns once everything has ended; calling it again does nothing.
func (a *App) Stop() {
	a.stopOnce.Do(func() {
		if a.cancel != nil {
			a.cancel()
			shutdown, cancelShutdown := context.WithTimeout(context.Background(), 5*time.Second)
			if err := a.srv.Shutdown(shutdown); err != nil {
				level.Warn(a.logger).Log("msg", "requests still running at shutdown were cut off", "err", err)
			}
			cancelShutdown()
			if a.serving != nil {
				<-a.serving
			}
			a.background.Wait()
		}
		a.close()
	})
}
