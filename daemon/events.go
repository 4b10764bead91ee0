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

// serveEvents is /events, for an operator's bearer token; the stream ends
// when the token leaves the operator file.
func (f *Front) serveEvents(w http.ResponseWriter, r *http.Request) {
	token, _ := bearer(r.Header.Get("Authorization"))
	who := f.operators().Lookup(token)
	if who == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="browsergate operators"`)
		http.Error(w, "an operator's token is required (Authorization: Bearer <token>)", http.StatusUnauthorized)
		return
	}
	f.streamEvents(w, r, who, func() bool { return f.operators().Lookup(token) == who })
}

// streamEvents upgrades the request and streams the events to operator
// who while still() holds (checked at each event and ping).
func (f *Front) streamEvents(w http.ResponseWriter, r *http.Request, who string, still func() bool) {
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
			if !still() {
				f.closeRevoked(conn, who)
				return
			}
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
			if !still() {
				f.closeRevoked(conn, who)
				return
			}
			_ = conn.SetWriteDeadline(time.Now().Add(eventWriteWait))
			if err := conn.WriteJSON(e); err != nil {
				return
			}
		}
	}
}

// closeRevoked ends a stream whose operator may no longer watch.
func (f *Front) closeRevoked(conn *websocket.Conn, who string) {
	msg := websocket.FormatCloseMessage(websocket.ClosePolicyViolation, "the operator's token or sign-in is no longer valid")
	_ = conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
	f.cfg.Logger.Warn("event stream closed: the operator's token or sign-in ended", "operator", who)
}
