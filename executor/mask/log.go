package mask

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/browsergate/browsergate/internal/pagetext"
)

// LogHandler is a slog.Handler that masks what came from pages in a log
// line before the inner handler sees it, with the secrets of one manifest
// (a backend's lines, its sessions') or, for the daemon's own lines, of
// every manifest. The message, and the values of browsergate's own keys
// (ownLogKeys: names, stages, rules, ids), are browsergate's words and
// are never masked; a value holding marked page values (package pagetext) is
// masked there only; any other string value is masked whole, a reason
// where it quotes the line's URL or host.
type LogHandler struct {
	inner slog.Handler
	m     func() *Masker
}

// NewLogHandler is a LogHandler that hands inner the lines masked with
// the masker masker returns, asked for each line: a reload of the
// manifests changes the secrets without a new logger.
func NewLogHandler(inner slog.Handler, masker func() *Masker) *LogHandler {
	return &LogHandler{inner: inner, m: masker}
}

// ownLogKeys are the attributes whose values are browsergate's own words.
var ownLogKeys = map[string]bool{
	"session": true, "tool": true, "stage": true, "rule": true, "layer": true, "source": true,
	"connect": true, "allowed": true, "status": true, "ms": true, "duration": true, "id": true,
	"kind": true, "channel": true, "approved": true, "command": true, "ended": true, "tab": true,
	"port": true, "resolved": true, "dialed": true,
}

// Enabled is the inner handler's.
func (h *LogHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

// Handle masks the line and hands it to the inner handler.
func (h *LogHandler) Handle(ctx context.Context, r slog.Record) error {
	m := h.m()
	var quoted []string // the line's URLs and hosts, which its reason may quote
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "url", "host", "target":
			quoted = append(quoted, pagetext.Unmarked(a.Value.Resolve().String()))
		}
		return true
	})
	nr := slog.NewRecord(r.Time, r.Level, m.Finish(r.Message, true), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		nr.AddAttrs(m.attr(a, quoted))
		return true
	})
	return h.inner.Handle(ctx, nr)
}

// WithAttrs masks the attributes once, as they are added.
func (h *LogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	m := h.m()
	masked := make([]slog.Attr, len(as))
	for i, a := range as {
		masked[i] = m.attr(a, nil)
	}
	return &LogHandler{inner: h.inner.WithAttrs(masked), m: h.m}
}

// WithGroup is the inner handler's group, masked as the line is.
func (h *LogHandler) WithGroup(name string) slog.Handler {
	return &LogHandler{inner: h.inner.WithGroup(name), m: h.m}
}

// Masked is a log value masked already, with the session's secrets (a
// recorded turn's texts): LogHandler logs it as it is, its marks dropped.
type Masked string

// attr is a masked as its key says (LogHandler), where a reason may quote
// the line's URLs and hosts (quoted).
func (m *Masker) attr(a slog.Attr, quoted []string) slog.Attr {
	v := a.Value.Resolve()
	if x, ok := v.Any().(Masked); ok && v.Kind() == slog.KindAny {
		return slog.String(a.Key, pagetext.Unmarked(string(x)))
	}
	var text string
	switch v.Kind() {
	case slog.KindString:
		text = v.String()
	case slog.KindGroup:
		g := v.Group()
		out := make([]any, len(g))
		for i, e := range g {
			out[i] = m.attr(e, quoted)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		text = fmt.Sprint(v.Any())
	default:
		return a
	}
	switch {
	case ownLogKeys[a.Key]:
		text = m.Finish(text, true)
	case a.Key == "reason" && !pagetext.HasMarks(text):
		text = m.Finish(pagetext.MarkKnown(text, quoted...), true)
	default:
		text = m.FinishAll(text, true)
	}
	return slog.String(a.Key, text)
}
