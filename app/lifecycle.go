package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/onchain-exporter/onchain_exporter/demo"
	"github.com/onchain-exporter/onchain_exporter/expand"
)

// Start serves on the listen addresses and starts the reload loop and
// background expansion. It returns once the addresses are bound (on an
// error the caller calls Stop); what serving ends with later comes on Done.
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
	// Both end in Stop before the collectors close: none lands after the
	// final save.
	a.background.Go(func() { reloadLoop(a.ctx, a.logger, a.safe, a.reloads) })
	a.background.Go(func() { a.expander.Maintain(a.ctx, expand.Refresh, a.safe.Refine) })
	// The server's own messages go through the project's logger too.
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

// listen binds the TCP listen addresses, so that Start fails at once if it
// cannot; socket activation and vsock are web.ListenAndServe's (nil).
func (a *App) listen() ([]net.Listener, error) {
	w := a.opts.Web
	if w.WebSystemdSocket != nil && *w.WebSystemdSocket || w.WebListenAddresses == nil || len(*w.WebListenAddresses) == 0 ||
		slices.ContainsFunc(*w.WebListenAddresses, func(addr string) bool { return strings.HasPrefix(addr, "vsock://") }) {
		return nil, nil
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
// time (collector.Exporter.Settle).
func (a *App) Settle() { a.exp.Settle() }

// DueTolerance is collector.Exporter.DueTolerance.
func (a *App) DueTolerance(api, endpoint, window string) (time.Duration, bool) {
	return a.exp.DueTolerance(api, endpoint, window)
}

// Done has what serving ended with, when it ends before Stop.
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

// Stop ends serving (requests in flight get up to 5 s), the reload loop
// and background expansion, then closes what New started, last first:
// the collectors' last save is the last write. Calling it again does
// nothing.
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
