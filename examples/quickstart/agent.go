package quickstart

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsergate/browsergate/approval/operator"
	"github.com/browsergate/browsergate/toolclad"
)

// scriptedAgent plays the agent's part in the demo: a fixed plan, each step
// printed with what browsergate answered.
type scriptedAgent struct {
	cs     *mcp.ClientSession
	out    io.Writer
	socket string // the daemon's approvals socket, for the demo's operator
}

func (a *scriptedAgent) run(ctx context.Context, siteURL, canaryURL string) error {
	tools, err := a.cs.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	var names []string
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	fmt.Fprintf(a.out, "tools: %s\n\n", strings.Join(names, ", "))

	steps := []struct {
		tool string
		args func(snap string) map[string]any
		want bool // expect allowed
		// operator, when set, is how the demo's human answers the approval
		// the call is held for: "approve" or "deny".
		operator string
	}{
		{"demo.navigate", fixed(map[string]any{"url": siteURL + "/login"}), true, ""},
		{"demo.snapshot", fixed(nil), true, ""},
		{"demo.type_text", byRef("Username", map[string]any{"text": "alice"}), true, ""},
		{"demo.type_text", byRef("Password", map[string]any{"text": "<DEMO_PASSWORD>"}), true, ""},
		{"demo.click", byRef(`button "Sign in"`, nil), true, ""},
		{"demo.snapshot", fixed(nil), true, ""},
		{"demo.navigate", fixed(map[string]any{"url": canaryURL + "/"}), false, ""},
		// Held for a human (policy submit-authenticated-needs-approval),
		// who approves it out of band.
		{"demo.submit_form", fixed(map[string]any{"selector": "form"}), true, "approve"},
		// Refused before any human is asked: a secret was typed on this
		// site, so no script of the agent's may run on its pages (it could
		// read the password and pass it on in a form the masker does not
		// know). Elsewhere the policies would hold it for a human.
		{"demo.execute_js", fixed(map[string]any{"expression": "document.cookie"}), false, ""},
		// An in-scope page that tries to load an image from the canary:
		// the page is allowed, its request is not.
		{"demo.navigate", fixed(map[string]any{"url": siteURL + "/attack/img"}), true, ""},
	}
	snap := ""
	for _, st := range steps {
		args := st.args(snap)
		answered := make(chan error, 1)
		if st.operator != "" {
			go func() { answered <- a.operate(ctx, st.operator) }()
		}
		res, err := a.cs.CallTool(ctx, &mcp.CallToolParams{Name: st.tool, Arguments: args})
		if err != nil {
			return fmt.Errorf("%s: %w", st.tool, err)
		}
		if st.operator != "" {
			if err := <-answered; err != nil {
				return fmt.Errorf("%s: the operator could not answer: %w", st.tool, err)
			}
		}
		text := ResultText(res)
		if strings.HasSuffix(st.tool, ".snapshot") && !res.IsError {
			snap = text
		}
		verdict := "allowed"
		if res.IsError {
			verdict = "REFUSED"
		}
		fmt.Fprintf(a.out, "> %s %s  [%s]\n%s\n\n", st.tool, compactJSON(args), verdict, indent(text))
		if res.IsError == st.want {
			return fmt.Errorf("%s: expected allowed=%v, got: %s", st.tool, st.want, text)
		}
	}
	return nil
}

// operate plays the human operator: it waits for the call to show up in
// the daemon's pending approvals (over the operator socket, as
// `browsergate approvals` does) and answers it.
func (a *scriptedAgent) operate(ctx context.Context, verb string) error {
	c, err := operator.NewClient(a.socket)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		pending, err := c.List(ctx)
		if err != nil {
			return err
		}
		if len(pending) > 0 {
			p := pending[0]
			fmt.Fprintf(a.out, "  [operator] held: %s — %s\n  [operator] $ browsergate approvals %s %s --by demo-operator\n\n", p.ID, p.Summary(), verb, p.ID)
			_, err := c.Decide(ctx, p.ID, operator.Decision{Approve: verb == "approve", By: "demo-operator"})
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errNotHeld
}

func fixed(args map[string]any) func(string) map[string]any {
	return func(string) map[string]any { return args }
}

// byRef finds the ref of the snapshot line that contains prefix and adds
// it to args.
func byRef(prefix string, args map[string]any) func(string) map[string]any {
	return func(snap string) map[string]any {
		out := map[string]any{"ref": FindRef(snap, prefix)}
		for k, v := range args {
			out[k] = v
		}
		return out
	}
}

// refRE is a ref in a snapshot: [link text](e4 /target), [button "Save" e5].
var refRE = regexp.MustCompile(`[ (](e\d+)[ )\]]`)

// FindRef returns the element ref ("e7") of the first element at or after
// text on a snapshot line, or "" when there is none: how an agent picks
// the element to click or type into ("Username" finds the field after
// its label, "Sign in" the button named so).
func FindRef(snap, text string) string {
	for _, line := range strings.Split(snap, "\n") {
		if i := strings.Index(line, text); i >= 0 {
			if m := refRE.FindStringSubmatch(line[i:]); m != nil {
				return m[1]
			}
		}
	}
	return ""
}

// ResultText is the text of a tool result, its text parts joined by
// newlines.
func ResultText(res *mcp.CallToolResult) string { return toolclad.ResultText(res) }

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

func compactJSON(m map[string]any) string {
	if len(m) == 0 {
		return "{}"
	}
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%s=%q", k, fmt.Sprint(v)))
	}
	return "{" + strings.Join(parts, " ") + "}"
}
