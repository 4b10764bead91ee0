package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/browsergate/browsergate/executor/approval"
)

// The operator channel: a small HTTP API on a Unix socket that only the
// daemon's user can open (mode 0600), with a bearer token in a file beside
// it (also 0600). Neither is ever handed to the agent: the MCP connection
// carries browser commands only, and no tool reaches a Unix socket.
//
//	GET  /v1/approvals                 the pending calls, oldest first
//	POST /v1/approvals/{id}            {"approve": bool, "by": "...", "note": "..."}

// defaultApprovalsSocket is where serve listens and the CLI looks when no
// --socket is given: beside the evidence file.
func defaultApprovalsSocket(evidencePath string) string { return evidencePath + ".approvals.sock" }

func tokenPath(socket string) string { return socket + ".token" }

// approvalsServer serves the operator channel for broker on socket.
type approvalsServer struct {
	broker *approval.Broker
	token  string
	logger *slog.Logger
	srv    *http.Server
	socket string
}

type peerKey struct{}

// listenApprovals creates the socket and the token file. A live daemon on
// the same socket is an error; a stale socket file is replaced.
func listenApprovals(socket string, broker *approval.Broker, logger *slog.Logger) (*approvalsServer, error) {
	if c, err := net.DialTimeout("unix", socket, time.Second); err == nil {
		c.Close()
		return nil, fmt.Errorf("approvals socket %s is in use by another browsergate serve; give this one its own --approvals-socket", socket)
	}
	os.Remove(socket)
	old := syscall.Umask(0o177) // the socket is created 0600: only this user may connect
	ln, err := net.Listen("unix", socket)
	syscall.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("approvals socket: %w", err)
	}
	if err := os.Chmod(socket, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("approvals socket: %w", err)
	}
	var raw [32]byte
	rand.Read(raw[:])
	token := hex.EncodeToString(raw[:])
	if err := writeToken(tokenPath(socket), token); err != nil {
		ln.Close()
		return nil, fmt.Errorf("approvals token: %w", err)
	}
	a := &approvalsServer{broker: broker, token: token, logger: logger, socket: socket}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/approvals", a.list)
	mux.HandleFunc("POST /v1/approvals/{id}", a.decide)
	a.srv = &http.Server{
		Handler:           a.auth(mux),
		ReadHeaderTimeout: 5 * time.Second,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, peerKey{}, peerUID(c))
		},
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
	}
	go a.srv.Serve(ln)
	return a, nil
}

// Close stops serving and removes the socket and the token.
func (a *approvalsServer) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	a.srv.Shutdown(ctx)
	os.Remove(a.socket)
	os.Remove(tokenPath(a.socket))
}

// writeToken creates the token file afresh, readable by this user only. It
// never writes through a file someone else put there: an old file is
// removed and the new one created exclusively.
func writeToken(path, token string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(token + "\n"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// auth admits a request that carries the token and comes from this user
// (or root), as the kernel reports the peer of the socket.
func (a *approvalsServer) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uid, _ := r.Context().Value(peerKey{}).(int)
		if uid != os.Getuid() && uid != 0 {
			writeJSON(w, http.StatusForbidden, map[string]string{"error": fmt.Sprintf("uid %d may not answer approvals of a daemon run by uid %d", uid, os.Getuid())})
			return
		}
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, []byte("Bearer "+a.token)) != 1 {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "missing or wrong token (read it from " + tokenPath(a.socket) + ")"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (a *approvalsServer) list(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, a.broker.List())
}

type decideBody struct {
	Approve *bool  `json:"approve"`
	By      string `json:"by"`
	Note    string `json:"note"`
}

func (a *approvalsServer) decide(w http.ResponseWriter, r *http.Request) {
	var body decideBody
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || body.Approve == nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": `want a JSON body {"approve": true|false, "by": "...", "note": "..."}`})
		return
	}
	// Who answered: the name the operator gave, and the uid the kernel
	// vouches for on the socket.
	by := body.By
	if uid, ok := r.Context().Value(peerKey{}).(int); ok && uid >= 0 {
		by = strings.TrimSpace(by + " (uid " + strconv.Itoa(uid) + ")")
	}
	id := r.PathValue("id")
	err := a.broker.Decide(id, approval.Outcome{Approved: *body.Approve, Channel: approval.ChannelOperator, By: by, Note: body.Note})
	if errors.Is(err, approval.ErrUnknown) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("no pending approval %q (already answered, expired, or never held)", id)})
		return
	}
	a.logger.Warn("approval answered on the operator socket", "id", id, "approved", *body.Approve, "by", by)
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "approved": *body.Approve, "by": by})
}

// peerUID is the uid of the process at the other end of a Unix socket, or
// -1 when the kernel does not say.
func peerUID(c net.Conn) int {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return -1
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return -1
	}
	uid := -1
	raw.Control(func(fd uintptr) {
		if cred, err := syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED); err == nil {
			uid = int(cred.Uid)
		}
	})
	return uid
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// approvalsCmd is `browsergate approvals list|approve|deny`.
func approvalsCmd(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: approvals needs list, approve ID or deny ID", errUsage)
	}
	verb := args[0]
	fs := flag.NewFlagSet("approvals "+verb, flag.ContinueOnError)
	socket := fs.String("socket", "", "the daemon's approvals socket (default: beside --evidence)")
	evidencePath := fs.String("evidence", "", "the daemon's evidence file, to find its socket")
	by := fs.String("by", currentUser(), "your name, recorded in the evidence with the decision")
	note := fs.String("note", "", "a note recorded with the decision")
	// Flags may come before or after the id.
	rest := args[1:]
	var id string
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		id, rest = rest[0], rest[1:]
	}
	if err := parse(fs, rest); err != nil {
		return err
	}
	if id == "" && fs.NArg() > 0 {
		id = fs.Arg(0)
	}
	if *socket == "" {
		if *evidencePath == "" {
			return fmt.Errorf("%w: approvals needs --socket or --evidence", errUsage)
		}
		*socket = defaultApprovalsSocket(*evidencePath)
	}
	c, err := newApprovalsClient(*socket)
	if err != nil {
		return err
	}
	switch verb {
	case "list":
		var pending []approval.Request
		if err := c.do(http.MethodGet, "/v1/approvals", nil, &pending); err != nil {
			return err
		}
		printPending(stdout, pending)
		return nil
	case "approve", "deny":
		if id == "" {
			return fmt.Errorf("%w: approvals %s needs the id of a pending approval (see approvals list)", errUsage, verb)
		}
		approve := verb == "approve"
		var res struct {
			By string `json:"by"`
		}
		if err := c.do(http.MethodPost, "/v1/approvals/"+id, decideBody{Approve: &approve, By: *by, Note: *note}, &res); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: %sd by %s\n", id, verb, res.By)
		return nil
	default:
		return fmt.Errorf("%w: unknown approvals command %q (want list, approve or deny)", errUsage, verb)
	}
}

func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

func printPending(w io.Writer, pending []approval.Request) {
	if len(pending) == 0 {
		fmt.Fprintln(w, "no calls are waiting for approval")
		return
	}
	for _, p := range pending {
		args, _ := json.Marshal(p.Args)
		fmt.Fprintf(w, "%s  (%s left)  session %s\n", p.ID, time.Until(p.Deadline).Round(time.Second), p.Session)
		fmt.Fprintf(w, "  call:   %s %s\n", p.Tool, args)
		fmt.Fprintf(w, "  page:   %s\n", p.Page)
		if p.URL != "" && p.URL != p.Page {
			fmt.Fprintf(w, "  leads:  %s\n", p.URL)
		}
		if p.Tier != "" {
			fmt.Fprintf(w, "  tier:   %s\n", p.Tier)
		}
		fmt.Fprintf(w, "  why:    %s\n\n", strings.Join(p.Why, "; "))
	}
}

type approvalsClient struct {
	http  *http.Client
	token string
	sock  string
}

func newApprovalsClient(socket string) (*approvalsClient, error) {
	tok, err := os.ReadFile(tokenPath(socket))
	if err != nil {
		return nil, fmt.Errorf("read the approvals token: %w (is browsergate serve running with this evidence file or --approvals-socket, as this user?)", err)
	}
	return &approvalsClient{
		token: strings.TrimSpace(string(tok)), sock: socket,
		http: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", socket)
			},
		}},
	}, nil
}

func (c *approvalsClient) do(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://browsergate"+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	res, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("approvals socket %s: %w", c.sock, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 4<<20))
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			return errors.New(e.Error)
		}
		return fmt.Errorf("approvals socket: %s", res.Status)
	}
	return json.Unmarshal(data, out)
}
