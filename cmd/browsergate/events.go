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
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/gorilla/websocket"

	"github.com/browsergate/browsergate/executor/daemon"
)

var eventsCommand = &command{
	name:     "events",
	synopsis: "--follow --url URL --operator-token-file FILE [--operator NAME] [--ca-cert FILE]",
	summary: "Print the event stream of a browsergate serve --http, one JSON object a line, as it happens:\n" +
		"decisions, requests the egress gate refused, approvals asked and answered, sessions opened and ended.",
	setup: func(fs *flag.FlagSet) action {
		follow := fs.Bool("follow", false, "keep printing events as they happen (required: the stream has no history)")
		url := fs.String("url", "", "the daemon's base `URL` (http://127.0.0.1:8080, as serve --http printed it)")
		tokens := fs.String("operator-token-file", "", "the operators' token `FILE` (NAME:TOKEN a line), as given to serve")
		name := fs.String("operator", "", "which operator's token of the file to use, by `NAME` (default: the first)")
		ca := fs.String("ca-cert", "", "a CA certificate `FILE` (PEM) to trust for an https URL")
		return func(_ []string, stdout, _ io.Writer) error {
			if !*follow || *url == "" || *tokens == "" {
				return fmt.Errorf("%w: events needs --follow, --url and --operator-token-file", errUsage)
			}
			token, err := operatorToken(*tokens, *name)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return followEvents(ctx, *url, token, *ca, stdout)
		}
	},
}

// operatorToken is the token of the named operator ("": the first) in an
// operator token file.
func operatorToken(path, name string) (string, error) {
	if _, err := daemon.LoadOperators(path); err != nil {
		return "", err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	lines, _ := daemon.OperatorLines(data) // as LoadOperators read them
	for _, l := range lines {
		if name == "" || l.Name == name {
			return l.Token, nil
		}
	}
	return "", fmt.Errorf("%w: no operator %q in %s", errUsage, name, path)
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
