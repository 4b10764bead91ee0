package operator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/browsergate/browsergate/approval"
)

// Decision is a human's answer to a held call.
type Decision struct {
	Approve bool
	By      string // the operator's name, recorded in the evidence
	Note    string // recorded with the decision
}

// Answer is what the daemon recorded for a decision.
type Answer struct {
	ID       string `json:"id"`
	Approved bool   `json:"approved"`
	// Answered: the request was a question, and it took the answer.
	Answered bool `json:"answered,omitempty"`
	// By is the name given, followed by the uid the kernel reported for
	// the caller: "alice (uid 1000)".
	By string `json:"by"`
}

// Client talks to a daemon's operator channel.
type Client struct {
	http   *http.Client
	token  string
	socket string
}

// NewClient returns a client for the daemon listening on socket, with the
// token read from TokenPath(socket): only the daemon's user can read it.
func NewClient(socket string) (*Client, error) {
	tok, err := os.ReadFile(TokenPath(socket))
	if err != nil {
		return nil, fmt.Errorf("read the approvals token: %w (is browsergate serve running with this evidence file or --approvals-socket, as this user?)", err)
	}
	return &Client{
		token: strings.TrimSpace(string(tok)), socket: socket,
		http: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", socket)
			},
		}},
	}, nil
}

// List returns the calls waiting for a human, oldest first.
func (c *Client) List(ctx context.Context) ([]approval.Request, error) {
	var pending []approval.Request
	if err := c.do(ctx, http.MethodGet, "/v1/approvals", nil, &pending); err != nil {
		return nil, err
	}
	return pending, nil
}

// Decide approves or denies the held call id. An id that is not pending is
// ErrNotPending.
func (c *Client) Decide(ctx context.Context, id string, d Decision) (Answer, error) {
	var a Answer
	err := c.do(ctx, http.MethodPost, "/v1/approvals/"+id, decideBody{Approve: &d.Approve, By: d.By, Note: d.Note}, &a)
	return a, err
}

// Reply is an operator's answer to a question (await_human).
type Reply struct {
	Text   string // the answer
	Secret bool   // keep it from the agent: it gets a placeholder to type
	By     string // the operator's name, recorded in the evidence
	Note   string // recorded with the answer
}

// AnswerQuestion answers the question id with r. An id that is not
// pending is ErrNotPending; an answer that does not fit the request (a
// held call, a secret too short to mask) is ErrBadRequest.
func (c *Client) AnswerQuestion(ctx context.Context, id string, r Reply) (Answer, error) {
	var a Answer
	err := c.do(ctx, http.MethodPost, "/v1/approvals/"+id, decideBody{Answer: &r.Text, Secret: r.Secret, By: r.By, Note: r.Note}, &a)
	return a, err
}

// Evidence writes the daemon's consistent copy of its evidence file to w.
// It may take longer than the other calls (a large file): ctx bounds it.
func (c *Client) Evidence(ctx context.Context, w io.Writer) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://browsergate/v1/evidence", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	hc := *c.http
	hc.Timeout = 0
	res, err := hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("approvals socket %s: %w", c.socket, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
		var e errorBody
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			return 0, &statusError{kind: statusKind(res.StatusCode), msg: e.Error}
		}
		return 0, &statusError{kind: statusKind(res.StatusCode), msg: "approvals socket: " + res.Status + " (a daemon that does not serve its evidence file)"}
	}
	return io.Copy(w, res.Body)
}

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://browsergate"+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	res, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("approvals socket %s: %w", c.socket, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 4<<20))
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		kind := statusKind(res.StatusCode)
		var e errorBody
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			return &statusError{kind: kind, msg: e.Error}
		}
		return &statusError{kind: kind, msg: "approvals socket: " + res.Status}
	}
	return json.Unmarshal(data, out)
}

// statusKind is the sentinel error for an HTTP status from the daemon.
func statusKind(status int) error {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return ErrUnauthorized
	case http.StatusNotFound:
		return ErrNotPending
	case http.StatusBadRequest:
		return ErrBadRequest
	}
	return fmt.Errorf("approvals socket: status %d", status)
}
