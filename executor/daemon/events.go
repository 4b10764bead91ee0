package daemon

import (
	"context"
	"net/http"
	"time"

	"github.com/gorilla/websocket"
)

// The operators' event stream: GET /events upgrades to a WebSocket and
// sends each event as one JSON text message, in order, from the moment it
// connects. An operator too slow to read is dropped (the close message
// says so); the daemon never waits for one.

// eventWriteWait bounds the writing of one message: a connection that
// cannot take one in this time is closed.
const eventWriteWait = 10 * time.Second

// eventPing is how often an idle stream is pinged, so that a dead peer is
// found.
const eventPing = 30 * time.Second

// CloseFellBehind is the close code sent to an operator dropped for
// falling behind (a private-use code, RFC 6455 §7.4.2).
const CloseFellBehind = 4000

func (f *Front) serveEvents(w http.ResponseWriter, r *http.Request) {
	who := f.operator(r)
	if who == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="browsergate operators"`)
		http.Error(w, "an operator's token is required (Authorization: Bearer <token>, or the console's sign-in)", http.StatusUnauthorized)
		return
	}
	// The guard has checked the Origin against the allowed ones.
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	conn, err := up.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered
	}
	defer conn.Close()
	f.cfg.Logger.Info("event stream opened", "operator", who, "remote", r.RemoteAddr)
	watch := f.cfg.Events.Watch()
	defer watch.Close()

	// Reads only to see control frames and the peer going away.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	conn.SetReadLimit(4 << 10)
	go func() {
		defer cancel()
		for {
			if _, _, err := conn.NextReader(); err != nil {
				return
			}
		}
	}()
	ping := time.NewTicker(eventPing)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ping.C:
			if conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(eventWriteWait)) != nil {
				return
			}
		case e, ok := <-watch.C:
			if !ok {
				msg := websocket.FormatCloseMessage(CloseFellBehind, "fell behind: more than the stream's buffer of events unread")
				_ = conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
				f.cfg.Logger.Warn("event stream dropped: the operator fell behind", "operator", who, "remote", r.RemoteAddr)
				return
			}
			_ = conn.SetWriteDeadline(time.Now().Add(eventWriteWait))
			if err := conn.WriteJSON(e); err != nil {
				return
			}
		}
	}
}

// operator is the operator a request is from ("": none).
func (f *Front) operator(r *http.Request) string {
	ops := f.operators()
	if ops == nil {
		return ""
	}
	if token, ok := bearer(r.Header.Get("Authorization")); ok {
		return ops.Lookup(token)
	}
	if f.console != nil {
		if s := f.console.signInOf(r); s != nil {
			return s.operator
		}
	}
	return ""
}
