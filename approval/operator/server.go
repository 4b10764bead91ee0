package operator

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/browsergate/browsergate/approval"
)

// DefaultSocket is where the daemon listens, and the client looks, when no
// socket is named: beside the evidence file.
func DefaultSocket(evidencePath string) string { return evidencePath + ".approvals.sock" }

// TokenPath is the file beside socket that holds its bearer token.
func TokenPath(socket string) string { return socket + ".token" }

// Config says where a Server listens and whose held calls it answers.
type Config struct {
	// Socket is the path of the Unix socket (required).
	Socket string
	// Broker holds the calls waiting for a human (required).
	Broker *approval.Broker
	// Logger receives one warning per answer; nil discards.
	Logger *slog.Logger
	// Evidence writes a consistent copy of the evidence file
	// (evidence.Store.Backup): GET /v1/evidence serves it, so that the
	// evidence commands can read the file of a running daemon. Nil: not
	// served.
	Evidence func(w io.Writer) (int64, error)
}

// Server serves the operator channel on a Unix socket.
type Server struct {
	broker   *approval.Broker
	evidence func(w io.Writer) (int64, error)
	token    string
	logger   *slog.Logger
	srv      *http.Server
	socket   string
}

type peerKey struct{}

// Listen creates the socket (0600) and the token file (0600) and serves
// the channel until Close. A live daemon on the same socket is ErrInUse; a
// stale socket file left by a daemon that died is replaced.
func Listen(cfg Config) (*Server, error) {
	if cfg.Socket == "" || cfg.Broker == nil {
		return nil, errors.New("approvals socket: a socket path and a broker are required")
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	socket := cfg.Socket
	if c, err := net.DialTimeout("unix", socket, time.Second); err == nil {
		c.Close()
		return nil, fmt.Errorf("%w: %s is in use by another browsergate serve; give this one its own --approvals-socket", ErrInUse, socket)
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
	if err := writeToken(TokenPath(socket), token); err != nil {
		ln.Close()
		return nil, fmt.Errorf("approvals token: %w", err)
	}
	s := &Server{broker: cfg.Broker, evidence: cfg.Evidence, token: token, logger: logger, socket: socket}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/approvals", s.list)
	mux.HandleFunc("POST /v1/approvals/{id}", s.decide)
	if s.evidence != nil {
		mux.HandleFunc("GET /v1/evidence", s.backup)
	}
	s.srv = &http.Server{
		Handler:           s.auth(mux),
		ReadHeaderTimeout: 5 * time.Second,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, peerKey{}, peerUID(c))
		},
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
	}
	go s.srv.Serve(ln)
	return s, nil
}

// Socket is the path the server listens on.
func (s *Server) Socket() string { return s.socket }

// Close stops serving and removes the socket and the token file.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	os.Remove(s.socket)
	os.Remove(TokenPath(s.socket))
	return err
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
func (s *Server) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uid, _ := r.Context().Value(peerKey{}).(int)
		if uid != os.Getuid() && uid != 0 {
			writeJSON(w, http.StatusForbidden, errorBody{fmt.Sprintf("uid %d may not answer approvals of a daemon run by uid %d", uid, os.Getuid())})
			return
		}
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, []byte("Bearer "+s.token)) != 1 {
			writeJSON(w, http.StatusUnauthorized, errorBody{"missing or wrong token (read it from " + TokenPath(s.socket) + ")"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// backup streams a consistent copy of the evidence file, written from one
// read transaction while appends go on.
func (s *Server) backup(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/octet-stream")
	if _, err := s.evidence(w); err != nil {
		// Past the first byte the status is sent: the client sees a short
		// body, which is not a valid bbolt file, and says so.
		s.logger.Warn("evidence copy for the operator socket failed", "error", err.Error())
	}
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.broker.List())
}

// decideBody is the body of POST /v1/approvals/{id}: approve or deny a
// held call, or answer a question (answer, which approves it; secret marks
// the answer as one the agent must not see).
type decideBody struct {
	Approve *bool   `json:"approve"`
	Answer  *string `json:"answer,omitempty"`
	Secret  bool    `json:"secret,omitempty"`
	By      string  `json:"by"`
	Note    string  `json:"note"`
}

type errorBody struct {
	Error string `json:"error"`
}

func (s *Server) decide(w http.ResponseWriter, r *http.Request) {
	var body decideBody
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	dec.DisallowUnknownFields()
	err := dec.Decode(&body)
	if err == nil && body.Answer != nil {
		// An answer approves the question; "approve": false with it is a
		// contradiction, not a denial.
		if body.Approve != nil && !*body.Approve {
			err = errors.New("an answer with approve: false")
		}
		body.Approve = new(true)
	}
	if err != nil || body.Approve == nil {
		writeJSON(w, http.StatusBadRequest, errorBody{`want a JSON body {"approve": true|false, "by": "...", "note": "..."}, or {"answer": "...", "secret": true|false, "by": "..."} for a question`})
		return
	}
	// Who answered: the name the operator gave, and the uid the kernel
	// vouches for on the socket.
	by := body.By
	if uid, ok := r.Context().Value(peerKey{}).(int); ok && uid >= 0 {
		by = strings.TrimSpace(by + " (uid " + strconv.Itoa(uid) + ")")
	}
	id := r.PathValue("id")
	o := approval.Outcome{Approved: *body.Approve, Channel: approval.ChannelOperator, By: by, Note: body.Note, Secret: body.Secret}
	if body.Answer != nil {
		// An answer, even an empty one, is an answer: the broker takes it
		// for a question only, never as a held call's approval.
		o.Answer, o.Answering = *body.Answer, true
	}
	err = s.broker.Decide(id, o)
	switch {
	case errors.Is(err, approval.ErrUnknown):
		writeJSON(w, http.StatusNotFound, errorBody{fmt.Sprintf("no pending approval %q (already answered, expired, or never held)", id)})
		return
	case errors.Is(err, approval.ErrBadAnswer):
		writeJSON(w, http.StatusBadRequest, errorBody{err.Error()})
		return
	case err != nil:
		writeJSON(w, http.StatusInternalServerError, errorBody{err.Error()})
		return
	}
	// The answer itself is never logged: it may be a secret.
	s.logger.Warn("approval answered on the operator socket", "id", id, "approved", *body.Approve, "question", body.Answer != nil, "by", by)
	writeJSON(w, http.StatusOK, Answer{ID: id, Approved: *body.Approve, Answered: body.Answer != nil, By: by})
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
