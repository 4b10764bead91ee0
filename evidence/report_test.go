package evidence_test

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/net/html"

	"github.com/browsergate/browsergate/evidence"
)

// hostile is text a web page or an agent controls, aimed at the report.
const hostile = `<script>alert("pwned")</script><img src=x onerror=alert(1)>"'&</pre></td>`

// tinyPNG is a real 3×2 PNG image.
func tinyPNG(t testing.TB) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	img.Set(1, 1, color.RGBA{R: 200, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// reportFixture writes session s1 (an allowed navigate with a screenshot,
// a denied navigate, a call held for approval, a call with hostile text
// everywhere) and session s2 (one record), and closes the store.
func reportFixture(t *testing.T, key ed25519.PrivateKey) string {
	t.Helper()
	s, path := openStore(t, &evidence.Options{Now: fixedClock(time.Second), SigningKey: key})
	allowed := envelope("s1", "https://a.example.com/")
	denied := &evidence.Envelope{
		Session: "s1", Principal: "alice", Tool: "chrome_live", Command: "navigate",
		Args: map[string]any{"url": "http://127.0.0.2/"},
		Decision: evidence.Decision{Stage: "scope", Rule: "allowed_domains",
			Reasons: []string{"host 127.0.0.2 not in allowed_domains"}},
	}
	approved := envelope("s1", "https://a.example.com/form")
	approved.Command = "submit_form"
	approved.Decision.Approval = &evidence.Approval{ID: "apr-7", Approved: true, Channel: "operator", By: "bob",
		At: time.Date(2026, 11, 22, 10, 0, 5, 0, time.UTC), Note: "looks fine"}
	approved.Blocked = []evidence.BlockedRequest{{URL: "http://127.0.0.2/pixel", Rule: "allowed_domains", Layer: "interception"}}
	evil := envelope("s1", "https://a.example.com/evil")
	evil.Args = map[string]any{"text": hostile}
	evil.After["title"] = hostile
	evil.Output = "page says: " + hostile
	evil.Decision.Reasons = []string{hostile}
	evil.Error = hostile
	for i, e := range []*evidence.Envelope{allowed, denied, approved, evil} {
		var shot []byte
		switch i {
		case 0:
			shot = tinyPNG(t)
		case 3:
			shot = []byte(hostile) // bytes that are no image
		}
		if err := s.Append(e, shot); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Append(envelope("s2", "https://b.example.com/"), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func exportHTML(t *testing.T, path string, opts evidence.HTMLOptions) (*html.Node, string, *evidence.Report) {
	t.Helper()
	s, err := evidence.Open(path, &evidence.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if opts.Now == nil {
		opts.Now = func() time.Time { return t0 }
	}
	var buf bytes.Buffer
	rep, err := s.ExportHTML(&buf, opts)
	if err != nil {
		t.Fatalf("ExportHTML: %v", err)
	}
	doc, err := html.Parse(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return doc, buf.String(), rep
}

// find returns the elements under n for which match is true.
func find(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	for c := range n.Descendants() {
		if c.Type == html.ElementNode && match(c) {
			out = append(out, c)
		}
	}
	return out
}

func attr(n *html.Node, name string) string {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, class string) bool {
	for _, c := range strings.Fields(attr(n, "class")) {
		if c == class {
			return true
		}
	}
	return false
}

func text(n *html.Node) string {
	var b strings.Builder
	for c := range n.Descendants() {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return b.String()
}

func byID(t *testing.T, doc *html.Node, id string) *html.Node {
	t.Helper()
	got := find(doc, func(n *html.Node) bool { return attr(n, "id") == id })
	if len(got) != 1 {
		t.Fatalf("%d elements with id %q", len(got), id)
	}
	return got[0]
}

func TestExportHTMLEscapesHostileText(t *testing.T) {
	t.Parallel()
	doc, raw, rep := exportHTML(t, reportFixture(t, nil), evidence.HTMLOptions{Source: hostile})
	if !rep.OK() {
		t.Fatalf("fixture does not verify: %q", rep.Problems)
	}
	for _, tag := range []string{"script", "iframe", "object", "embed", "link", "base", "form"} {
		if n := find(doc, func(n *html.Node) bool { return n.Data == tag }); len(n) > 0 {
			t.Errorf("the report has a <%s> element", tag)
		}
	}
	for _, n := range find(doc, func(*html.Node) bool { return true }) {
		for _, a := range n.Attr {
			if strings.HasPrefix(a.Key, "on") {
				t.Errorf("<%s> has an event handler attribute %s=%q", n.Data, a.Key, a.Val)
			}
		}
		if n.Data == "img" && !strings.HasPrefix(attr(n, "src"), "data:image/png;base64,") {
			t.Errorf("<img src=%q>: only embedded PNGs belong in the report", attr(n, "src"))
		}
	}
	// The hostile text is there, as text, wherever it was recorded.
	row := byID(t, doc, "s1-r4")
	asJSON := strings.NewReplacer(`"`, `\"`).Replace(hostile) // arguments are shown as JSON
	for where, want := range map[string]string{"args": asJSON, "state-title": hostile, "output": hostile, "reasons": hostile} {
		cells := find(row, func(n *html.Node) bool { return hasClass(n, where) })
		if len(cells) == 0 || !strings.Contains(text(cells[len(cells)-1]), want) {
			t.Errorf("%s of record 4 does not show the hostile text as text", where)
		}
	}
	if !strings.Contains(text(byID(t, doc, "source")), hostile) {
		t.Error("the source name is not shown as text")
	}
	if !strings.Contains(text(row), "not an image") {
		t.Error("bytes that are no image are not reported as such")
	}
	// The page loads nothing from anywhere.
	csp := find(doc, func(n *html.Node) bool { return n.Data == "meta" && attr(n, "http-equiv") == "Content-Security-Policy" })
	if len(csp) != 1 || !strings.Contains(attr(csp[0], "content"), "default-src 'none'") {
		t.Errorf("no restrictive Content-Security-Policy: %v", csp)
	}
	for _, n := range find(doc, func(n *html.Node) bool { return attr(n, "href") != "" }) {
		if !strings.HasPrefix(attr(n, "href"), "#") {
			t.Errorf("link out of the report: <%s href=%q>", n.Data, attr(n, "href"))
		}
	}
	if strings.Contains(raw, "url(") || strings.Contains(raw, "@import") {
		t.Error("the style sheet loads something")
	}
}

func TestExportHTMLShowsEveryInteraction(t *testing.T) {
	t.Parallel()
	doc, _, _ := exportHTML(t, reportFixture(t, nil), evidence.HTMLOptions{})
	sessions := find(doc, func(n *html.Node) bool { return n.Data == "section" && hasClass(n, "session") })
	if len(sessions) != 2 || attr(sessions[0], "data-session") != "s1" || attr(sessions[1], "data-session") != "s2" {
		t.Fatalf("sessions: %d sections", len(sessions))
	}
	rows := find(sessions[0], func(n *html.Node) bool { return n.Data == "tr" && hasClass(n, "interaction") })
	if len(rows) != 4 {
		t.Fatalf("session s1 has %d interaction rows, want 4", len(rows))
	}
	for i, want := range []string{"ALLOWED", "DENIED", "ALLOWED", "ALLOWED"} {
		if attr(rows[i], "data-seq") != string(rune('1'+i)) || !strings.Contains(text(rows[i]), want) {
			t.Errorf("row %d: data-seq %q, text %q; want %s", i, attr(rows[i], "data-seq"), text(rows[i]), want)
		}
	}
	for _, want := range []string{"allowed_domains", "host 127.0.0.2 not in allowed_domains", "scope"} {
		if !strings.Contains(text(rows[1]), want) {
			t.Errorf("denied row lacks %q", want)
		}
	}
	approval := text(find(rows[2], func(n *html.Node) bool { return hasClass(n, "approval") })[0])
	for _, want := range []string{"apr-7", "approved", "operator", "bob", "2026-11-22 10:00:05.000 UTC", "looks fine"} {
		if !strings.Contains(approval, want) {
			t.Errorf("approval %q lacks %q", approval, want)
		}
	}
	if !strings.Contains(text(rows[2]), "http://127.0.0.2/pixel") {
		t.Error("blocked request not shown")
	}
	imgs := find(rows[0], func(n *html.Node) bool { return n.Data == "img" })
	if len(imgs) != 1 {
		t.Fatalf("record 1 has %d images, want its screenshot", len(imgs))
	}
	if text(find(sessions[0], func(n *html.Node) bool { return hasClass(n, "principal") })[0]) != "alice" {
		t.Error("principal not shown")
	}
	// The auditor's views: each session's summary, and the refused calls
	// listed first, each linked to its row.
	if got := text(find(sessions[0], func(n *html.Node) bool { return hasClass(n, "summary") })[0]); !strings.Contains(got, "4 call(s): 3 allowed, 1 refused (scope 1); a human approved 1") {
		t.Errorf("summary of s1: %q", got)
	}
	refusals := find(doc, func(n *html.Node) bool { return n.Data == "section" && attr(n, "id") == "refusals" })
	if len(refusals) != 1 {
		t.Fatal("no list of refused calls")
	}
	links := find(refusals[0], func(n *html.Node) bool { return n.Data == "a" })
	if len(links) == 0 || attr(links[0], "href") != "#"+attr(rows[1], "id") || !strings.Contains(text(refusals[0]), "host 127.0.0.2 not in allowed_domains") {
		t.Errorf("the refused calls: %q", text(refusals[0]))
	}
}

func TestExportHTMLVerificationStatus(t *testing.T) {
	t.Parallel()
	signer := testKey(1)
	pub := signer.Public().(ed25519.PublicKey)
	tests := []struct {
		name      string
		key       ed25519.PrivateKey // signs the fixture
		edit      func(tx *bolt.Tx) error
		opts      evidence.HTMLOptions
		status    string // prefix of #verification
		problem   string // a problem listed, "" for none
		badRow    string // id of a row marked bad
		signature string // in s1's signature status
	}{
		{name: "intact unsigned", status: "intact: 2 session(s), 5 record(s)", signature: "unsigned"},
		{name: "intact signed, not checked", key: signer, status: "intact", signature: "not checked"},
		{name: "intact signed, checked", key: signer, opts: evidence.HTMLOptions{PublicKey: pub},
			status: "intact", signature: "valid (key " + evidence.KeyID(pub)},
		{
			name: "byte flipped", key: signer, opts: evidence.HTMLOptions{PublicKey: pub},
			edit: func(tx *bolt.Tx) error {
				b := chain(tx, "s1")
				v := bytes.Clone(b.Get(key(2)))
				v[bytes.Index(v, []byte("127.0.0.2"))] = '9'
				return b.Put(key(2), v)
			},
			status: "FAILED", problem: "session s1 record 2: hash mismatch", badRow: "s1-r2", signature: "valid",
		},
		{
			name: "signed with another key", key: testKey(3), opts: evidence.HTMLOptions{PublicKey: pub},
			status: "FAILED", problem: "session s1: head signed by key", signature: "INVALID",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := reportFixture(t, tt.key)
			if tt.edit != nil {
				tamper(t, path, tt.edit)
			}
			doc, _, rep := exportHTML(t, path, tt.opts)
			if got := text(byID(t, doc, "verification")); !strings.HasPrefix(got, tt.status) {
				t.Errorf("verification status %q, want prefix %q", got, tt.status)
			}
			if rep.OK() != (tt.problem == "") {
				t.Errorf("returned report OK = %v", rep.OK())
			}
			if tt.problem != "" {
				items := find(byID(t, doc, "problems"), func(n *html.Node) bool { return n.Data == "li" })
				found := false
				for _, li := range items {
					found = found || strings.HasPrefix(text(li), tt.problem)
				}
				if !found {
					t.Errorf("no problem %q listed", tt.problem)
				}
			}
			if tt.badRow != "" {
				if !hasClass(byID(t, doc, tt.badRow), "bad") {
					t.Errorf("row %s is not marked bad", tt.badRow)
				}
				if links := find(byID(t, doc, "problems"), func(n *html.Node) bool { return attr(n, "href") == "#"+tt.badRow }); len(links) == 0 {
					t.Errorf("no problem links to row %s", tt.badRow)
				}
			}
			sig := find(byID(t, doc, "s1"), func(n *html.Node) bool { return hasClass(n, "signature") })
			if len(sig) != 1 || !strings.Contains(text(sig[0]), tt.signature) {
				t.Errorf("signature status of s1 does not say %q", tt.signature)
			}
		})
	}
}

func TestExportHTMLOneSession(t *testing.T) {
	t.Parallel()
	path := reportFixture(t, nil)
	doc, _, _ := exportHTML(t, path, evidence.HTMLOptions{Session: "s2"})
	sessions := find(doc, func(n *html.Node) bool { return n.Data == "section" && hasClass(n, "session") })
	if len(sessions) != 1 || attr(sessions[0], "data-session") != "s2" {
		t.Fatalf("export of s2 has %d sessions", len(sessions))
	}
	s, err := evidence.Open(path, &evidence.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.ExportHTML(&bytes.Buffer{}, evidence.HTMLOptions{Session: "nope"}); !errors.Is(err, evidence.ErrUnknownSession) {
		t.Errorf("ExportHTML(unknown session): %v, want ErrUnknownSession", err)
	}
}
