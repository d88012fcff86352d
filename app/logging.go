package app

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	slgk "github.com/tjhop/slog-gokit"
)

// NewLoggers builds the project's go-kit logger (--log.level,
// --log.format) and, for libraries that take *slog.Logger, a bridge that
// writes through the same go-kit logger.
func NewLoggers(w io.Writer, lvl, format string) (log.Logger, *slog.Logger) {
	base := log.NewLogfmtLogger(log.NewSyncWriter(w))
	if format == "json" {
		base = log.NewJSONLogger(log.NewSyncWriter(w))
	}
	filtered := level.NewFilter(base, level.Allow(level.ParseDefault(lvl, level.InfoValue())))
	stamped := log.With(filtered, "ts", log.DefaultTimestampUTC)
	logger := log.With(stamped, "caller", log.DefaultCaller)
	var sl slog.Level
	_ = sl.UnmarshalText([]byte(lvl))
	// The bridge adds its own caller key, and the record's time as "time":
	// give it the logger with our ts but without our caller, and records
	// without a time, so that every line has one time key, ts.
	slogger := slog.New(untimed{slgk.NewGoKitHandler(stamped, sl)})
	return logger, slogger
}

// untimed passes slog records on without their time.
type untimed struct{ slog.Handler }

func (h untimed) Handle(ctx context.Context, r slog.Record) error {
	r.Time = time.Time{}
	return h.Handler.Handle(ctx, r)
}

func (h untimed) WithAttrs(attrs []slog.Attr) slog.Handler {
	return untimed{h.Handler.WithAttrs(attrs)}
}

func (h untimed) WithGroup(name string) slog.Handler { return untimed{h.Handler.WithGroup(name)} }
