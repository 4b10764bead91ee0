package executor

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
)

func pageTarget(id, ctx, url, title, opener string) *target.Info {
	return &target.Info{TargetID: target.ID(id), Type: "page", BrowserContextID: cdp.BrowserContextID(ctx),
		URL: url, Title: title, OpenerID: target.ID(opener)}
}

// inExample allows the URLs of example.com only.
func inExample(u string) bool { return strings.Contains(u, "://example.com/") }

func TestTabListingUserContext(t *testing.T) {
	all := []*target.Info{
		pageTarget("S", "D", "https://example.com/app", "App", ""),             // the session's tab
		pageTarget("P", "D", "https://example.com/popup", "Popup", "S"),        // a popup it opened
		pageTarget("U1", "D", "https://example.com/inbox", "Inbox", ""),        // the user's, in scope
		pageTarget("U2", "D", "https://bank.test/account", "Bank account", ""), // the user's, out of scope
		pageTarget("U3", "D", "chrome://newtab/", "New Tab", ""),               // the user's, not a web page
		pageTarget("U4", "D", "about:blank", "", ""),                           // the user's, blank
		pageTarget("X", "OTHER", "https://example.com/other", "Other", ""),     // another browser context
		{TargetID: "W", Type: "service_worker", BrowserContextID: "D", URL: "https://example.com/sw.js"},
	}
	var ids tabIDs
	shown, hidden := tabListing(all, sessionPages(all, "", "S"), "S", true, inExample, &ids, nil)
	got := map[string]tabInfo{}
	for _, tb := range shown {
		got[string(tb.Target)] = tb
	}
	if len(shown) != 3 || got["S"].Owner != ownerSession || got["P"].Owner != ownerSession || got["U1"].Owner != ownerUser {
		t.Fatalf("shown = %+v, want the session's tab and popup and the user's in-scope tab", shown)
	}
	if !got["S"].Active || got["P"].Active || got["U1"].Active {
		t.Errorf("only the session's tab is active: %+v", shown)
	}
	if hidden != 3 {
		t.Errorf("hidden = %d, want 3 (out of scope, chrome://, about:blank; not the other context's)", hidden)
	}
	text := tabsText(shown, hidden)
	for _, never := range []string{"bank", "Bank", "newtab", "Other", "sw.js"} {
		if strings.Contains(text, never) {
			t.Errorf("the listing names %q:\n%s", never, text)
		}
	}
	if !strings.Contains(text, "3 other tab(s)") {
		t.Errorf("the listing does not count the hidden tabs:\n%s", text)
	}
	st := tabsStructured(shown, hidden)
	if list := st["tabs"].([]map[string]any); len(list) != 3 || st["hidden_tabs"] != 3 {
		t.Errorf("structured = %v", st)
	}
}

func TestTabListingOwnContext(t *testing.T) {
	// A session in a browser context of its own: its pages only, nothing
	// counted (the other pages are not the user's).
	all := []*target.Info{
		pageTarget("S", "C1", "https://example.com/", "A", ""),
		pageTarget("P", "C1", "https://example.com/b", "B", "S"),
		pageTarget("U", "D", "https://example.com/user", "User", ""),
	}
	var ids tabIDs
	shown, hidden := tabListing(all, sessionPages(all, "C1", "S"), "S", false, inExample, &ids, nil)
	if len(shown) != 2 || hidden != 0 {
		t.Fatalf("shown %+v hidden %d, want the session's two pages", shown, hidden)
	}
	for _, tb := range shown {
		if tb.Owner != ownerSession {
			t.Errorf("%+v is not the session's", tb)
		}
	}
}

func TestTabIDsAreStable(t *testing.T) {
	var ids tabIDs
	a, b := ids.id("A"), ids.id("B")
	if a == b || ids.id("A") != a {
		t.Fatalf("ids: A=%s B=%s, A again %s", a, b, ids.id("A"))
	}
	// A target that is gone keeps its id; a new one never gets it.
	if c := ids.id("C"); c == a || c == b {
		t.Fatalf("a new target got an old id: %s", c)
	}
	if got, ok := ids.target(b); !ok || got != "B" {
		t.Errorf("target(%s) = %s, %v", b, got, ok)
	}
	if _, ok := ids.target("t99"); ok {
		t.Error("an id never given names a target")
	}
	// Listing twice gives the same ids.
	all := []*target.Info{pageTarget("S", "D", "https://example.com/", "", ""), pageTarget("U", "D", "https://example.com/u", "", "")}
	var ids2 tabIDs
	first, _ := tabListing(all, sessionPages(all, "", "S"), "S", true, inExample, &ids2, nil)
	reversed := []*target.Info{all[1], all[0]}
	second, _ := tabListing(reversed, sessionPages(reversed, "", "S"), "S", true, inExample, &ids2, nil)
	if len(first) != 2 || len(second) != 2 || first[1].ID != second[1].ID {
		t.Errorf("the user's tab changed id between listings: %s then %s", first[1].ID, second[0].ID)
	}
}

func TestTabListingHidesOtherSessionsTabs(t *testing.T) {
	// Two sessions in the user's context: B's tab and its popup are
	// neither listed nor adoptable by A (they are counted).
	all := []*target.Info{
		pageTarget("A", "D", "https://example.com/a", "A", ""),
		pageTarget("B", "D", "https://example.com/b", "B", ""),
		pageTarget("BP", "D", "https://example.com/bp", "B's popup", "B"),
		pageTarget("U", "D", "https://example.com/u", "User", ""),
	}
	others := map[target.ID]bool{}
	for _, p := range sessionPages(all, "", "B") {
		others[p.TargetID] = true
	}
	var ids tabIDs
	shown, hidden := tabListing(all, sessionPages(all, "", "A"), "A", true, inExample, &ids, others)
	if len(shown) != 2 || shown[1].Target != "U" || hidden != 2 {
		t.Fatalf("shown %+v hidden %d, want A's tab and the user's, B's two counted", shown, hidden)
	}
}

func TestTabClaims(t *testing.T) {
	c := tabClaims{m: map[target.ID]string{}}
	if !c.claim("T", "s1") || !c.claim("T", "s1") {
		t.Fatal("a session cannot claim a free tab, or its own again")
	}
	if c.claim("T", "s2") {
		t.Fatal("a second session claimed a held tab")
	}
	c.claim("U", "s1")
	if got := c.others("s2"); len(got) != 2 {
		t.Errorf("others(s2) = %v, want s1's two tabs", got)
	}
	c.release("s1", "T")
	if !c.claim("T", "s2") {
		t.Error("a released tab cannot be claimed")
	}
	c.release("s1")
	if got := c.others("s2"); len(got) != 0 {
		t.Errorf("after s1 released everything, others(s2) = %v", got)
	}
}

// TestTabListingKeepsItsOrder: list_tabs lists tabs in the order the
// session first saw them, however the browser orders its targets from one
// call to the next (it moves an activated tab first); a tab opened later
// comes last, in the user's context and in a context of the session's own.
func TestTabListingKeepsItsOrder(t *testing.T) {
	for _, user := range []bool{true, false} {
		ctx := "D"
		if !user {
			ctx = "C1"
		}
		browserCtx := ctx
		if user {
			browserCtx = "" // the user's context: the session's pages are found by their roots
		}
		s := pageTarget("S", ctx, "https://example.com/s", "", "")
		p := pageTarget("P", ctx, "https://example.com/p", "", "S")
		u := pageTarget("U", ctx, "https://example.com/u", "", "")
		n := pageTarget("N", ctx, "https://example.com/n", "", "S")
		var ids tabIDs
		ids.id("S") // the session's tab has its id from the first call
		list := func(all ...*target.Info) string {
			shown, _ := tabListing(all, sessionPages(all, cdp.BrowserContextID(browserCtx), "S"), "S", user, inExample, &ids, nil)
			var order []string
			for _, tb := range shown {
				order = append(order, tb.ID+"="+string(tb.Target))
			}
			return strings.Join(order, " ")
		}
		first := list(s, p, u)
		for _, again := range [][]*target.Info{{u, p, s}, {p, s, u}, {s, u, p}} {
			if got := list(again...); got != first {
				t.Errorf("user=%v: listed %s, then %s: the order changed with the browser's", user, first, got)
			}
		}
		if got, want := list(n, u, s, p), fmt.Sprintf("%s t%d=N", first, strings.Count(first, "=")+1); got != want {
			t.Errorf("user=%v: with a new tab, listed %s, want %s (the new tab last)", user, got, want)
		}
	}
}
