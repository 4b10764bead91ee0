package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	neturl "net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/gorilla/websocket"

	"github.com/browsergate/browsergate/daemon"
	"github.com/browsergate/browsergate/toolclad"
)

var eventsCommand = &command{
	name:     "events",
	synopsis: "--follow --url URL [--token-file FILE] [--ca-cert FILE]",
	summary: "Print the event stream of a browsergate serve --http, one JSON object a line, as it happens:\n" +
		"decisions, requests the egress gate refused, approvals asked and answered, sessions opened and ended.",
	setup: func(fs *flag.FlagSet) action {
		follow := fs.Bool("follow", false, "keep printing events as they happen (required: the stream has no history)")
		url := fs.String("url", "", "the daemon's base `URL` (http://127.0.0.1:8080, as serve --http printed it)")
		tokenFile := fs.String("token-file", "", "a `FILE` holding your operator token (default: $BROWSERGATE_OPERATOR_TOKEN)")
		ca := fs.String("ca-cert", "", "a CA certificate `FILE` (PEM) to trust for an https URL")
		return func(_ []string, stdout, _ io.Writer) error {
			if !*follow || *url == "" {
				return fmt.Errorf("%w: events needs --follow and --url", errUsage)
			}
			token, err := operatorToken(*tokenFile)
			if err != nil {
				return err
			}
			if err := clearTextAllowed(*url); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return followEvents(ctx, *url, token, *ca, stdout)
		}
	},
}

// operatorToken is the operator's own token: the file's first line that
// is not blank or a comment (a NAME:TOKEN line gives its TOKEN), else
// $BROWSERGATE_OPERATOR_TOKEN.
func operatorToken(path string) (string, error) {
	if path == "" {
		if t := strings.TrimSpace(os.Getenv("BROWSERGATE_OPERATOR_TOKEN")); t != "" {
			return t, nil
		}
		return "", fmt.Errorf("%w: events needs your operator token: --token-file FILE or $BROWSERGATE_OPERATOR_TOKEN", errUsage)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	lines, err := toolclad.OperatorLines(data)
	if err != nil || len(lines) == 0 {
		return "", fmt.Errorf("--token-file %s: no token in it (%v)", path, err)
	}
	return lines[0].Token, nil
}

// clearTextAllowed refuses to send a token over plain HTTP beyond
// loopback.
func clearTextAllowed(raw string) error {
	u, err := neturl.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: --url %q: want http(s)://host:port", errUsage, raw)
	}
	if u.Scheme == "http" {
		h := u.Hostname()
		if a, err := netip.ParseAddr(h); !(strings.EqualFold(h, "localhost") || err == nil && a.IsLoopback()) {
			return fmt.Errorf("--url %s: the token would cross the network in the clear: use https", raw)
		}
	}
	return nil
}

// followEvents prints the daemon's events until ctx ends or the daemon
// closes the stream.
func followEvents(ctx context.Context, base, token, caFile string, out io.Writer) error {
	d := websocket.Dialer{HandshakeTimeout: websocket.DefaultDialer.HandshakeTimeout, Proxy: nil}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("--ca-cert %s: no PEM certificate in it", caFile)
		}
		d.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	wsURL := "ws" + strings.TrimPrefix(strings.TrimRight(base, "/"), "http") + "/events"
	conn, resp, err := d.DialContext(ctx, wsURL, http.Header{"Authorization": {"Bearer " + token}})
	if err != nil {
		if resp != nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
			return fmt.Errorf("events: %s: %s", resp.Status, strings.TrimSpace(string(body)))
		}
		return fmt.Errorf("events: %w", err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	w := bufio.NewWriter(out)
	for {
		_, msg, err := conn.ReadMessage()
		if err != nil {
			w.Flush()
			var ce *websocket.CloseError
			switch {
			case ctx.Err() != nil:
				return nil
			case errors.As(err, &ce) && ce.Code == daemon.CloseFellBehind:
				return fmt.Errorf("events: the daemon dropped this stream: %s", ce.Text)
			case errors.As(err, &ce):
				return fmt.Errorf("events: the daemon closed the stream (%d %s)", ce.Code, ce.Text)
			}
			return fmt.Errorf("events: %w", err)
		}
		w.Write(bytes.TrimRight(msg, "\n"))
		w.WriteByte('\n')
		if err := w.Flush(); err != nil {
			return err
		}
	}
}
