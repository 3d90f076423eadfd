package queen

import (
	"context"
	"log/slog"
)

// warnToDefault is the client's logger when WithLogger is not given: records at warn level and
// above go to slog.Default()'s handler as it is when each is logged, so a program that sets
// its default logger after New still gets them; anything below warn is dropped.
type warnToDefault struct {
	derive []func(slog.Handler) slog.Handler // WithAttrs and WithGroup calls, in order
}

func (h warnToDefault) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= slog.LevelWarn && slog.Default().Handler().Enabled(ctx, level)
}

func (h warnToDefault) Handle(ctx context.Context, r slog.Record) error {
	target := slog.Default().Handler()
	for _, d := range h.derive {
		target = d(target)
	}
	return target.Handle(ctx, r)
}

func (h warnToDefault) WithAttrs(attrs []slog.Attr) slog.Handler {
	return h.with(func(t slog.Handler) slog.Handler { return t.WithAttrs(attrs) })
}

func (h warnToDefault) WithGroup(name string) slog.Handler {
	return h.with(func(t slog.Handler) slog.Handler { return t.WithGroup(name) })
}

func (h warnToDefault) with(d func(slog.Handler) slog.Handler) warnToDefault {
	return warnToDefault{derive: append(append([]func(slog.Handler) slog.Handler(nil), h.derive...), d)}
}
