package gate

import (
	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/toolclad"
)

// Facts are everything the decision on one call needs to know of the
// browser, read by the executor from sources the page cannot forge (CDP
// domains and the gate's isolated world, never the page's own world). A
// fact that could not be read is recorded as an error: Decide refuses
// what it cannot judge.
type Facts struct {
	State PageState // the tab before the call; State.URL == "": unreadable
	// UserTab: the tab is a user's the session adopted (where the user
	// may have gone by hand: an out-of-scope URL there is not shown).
	UserTab bool
	Forms   int // forms in the document (-1: unknown)
	// Pages are the session's other tabs (popups its pages opened).
	Pages    []Page
	PagesErr error
	// Element is the element the call acts on, for commands whose entry
	// observes one (nil otherwise).
	Element *Element
	// Fields, for fill_form, are the fields it types into, in the order
	// of its fields argument, each as type_text's Element.
	Fields []*Element
	// History is the history entry go_back or go_forward goes to, when
	// observed.
	History *History
	// Typed are the secrets typed on the current page since it loaded.
	Typed []*toolclad.Secret
	// Held are the secrets typed in the session whose domains the tab is
	// on: a later page of the site may hold the value too (a server that
	// echoes a wrong password back, storage).
	Held []*toolclad.Secret
	// Dialog is the JavaScript dialog held open for the agent (nil: none);
	// while one is, the page's scripts are stopped and nothing else of the
	// page is read.
	Dialog *Dialog
	// LostDialog, for handle_dialog with no dialog held, says what became
	// of the one that was held and ended without the agent's answer ("":
	// none did).
	LostDialog string
	// Tab is the tab a tab command names, as list_tabs would list it now
	// (nil: no such tab in the listing); TabErr: the tabs could not be
	// read.
	Tab    *Tab
	TabErr error
	// TabGroup, for a user's tab the session has not adopted, are the
	// pages of its browsing-context group that are not the session's:
	// switch_tab takes them with it, or is refused.
	TabGroup []GroupMember
	// Beside, for type_text (or fill_form) with a secret in the user's
	// browser context, names the unguarded pages that could reach the
	// field's page (any such field's, for fill_form);
	// BesideErr: the tabs could not be read.
	Beside    []string
	BesideErr error
	// StorageState is the saved signed-in state save_storage_state or
	// load_storage_state names (nil: not observed).
	StorageState *StorageState
}

// StorageState is a file of signed-in state (cookies, local storage) as
// the executor read it for load_storage_state, or, for
// save_storage_state, only whether the session may save one (Err).
type StorageState struct {
	// File is the state file: its name, size and SHA-256 (load), for
	// the record; never its contents.
	File evidence.FileRef
	// Sites are where the state would be sent: a URL for each cookie's
	// host and each local storage origin. Every one must be inside the
	// scope, or nothing of the file is applied.
	Sites []string
	// Holds are the secrets whose values the file holds: each may only
	// go to its own domains, as a file upload_file attaches.
	Holds []*toolclad.Secret
	// Replaces (save): a state of that name exists, and the save would
	// replace it: a human decides (the file may be one a later session
	// loads).
	Replaces bool
	// Err: the state cannot be saved or loaded here, or its file is not
	// one to trust (unreadable, malformed, too large, readable by
	// others).
	Err error
	// Parsed is the executor's reading of the file, applied as is by
	// the act: opaque to the gate.
	Parsed any
}

// PageID names one of the browser's pages (a tab, a popup). To the gate it
// is only a name, passed back in a Verdict; the executor gives its CDP
// target id.
type PageID string

// Page is one of the session's other tabs.
type Page struct {
	ID  PageID
	URL string
	// RefusedNav is where the tab's own main-frame navigation was going
	// when the egress gate refused it ("" when none was): a popup opened
	// straight at a forbidden URL may still show about:blank.
	RefusedNav string
	// User: a tab of the user's the session adopted; never closed, only
	// let go.
	User bool
	// Held: a user's tab kept under the guard after it left the scope.
	Held bool
}

// Element is the element a call names (or the one it falls back to).
type Element struct {
	Named bool   // named by ref or selector by the agent
	Label string // how it is named, for messages
	Err   error  // it could not be found
	// For click and submit_form: where acting on it leads.
	Dest    Destination
	DestErr error
	// For type_text: the target field.
	Field    Field
	FieldErr error
	// For upload_file: the file, as read and copied (the first of Files),
	// and every file the call names.
	File  *File
	Files []*File
	// For execute_js with ref or frame: the URL of the document the
	// script runs in, as the browser has it ("" for the tab's own page).
	Document string
}

// Destination is where acting on an element leads, as the executor's
// page script (js/destination.js) reports it.
type Destination struct {
	URL     string   `json:"url"`     // where the action leads ("": nowhere)
	URLs    []string `json:"urls"`    // every destination it may lead to (the form's action, each link on the path)
	Submits bool     `json:"submits"` // it submits a form
	InForm  bool     `json:"inForm"`
	Embeds  bool     `json:"embeds"` // a click may land in an embedded document (iframe, object, embed)
	// Downloads: a link on the way has the download attribute (the
	// browser downloads it rather than navigating, with no document
	// request the tab reports).
	Downloads bool `json:"downloads"`
}

// Field is the element text is typed into, as the executor's page script
// (js/field.js) reports it.
type Field struct {
	URL      string `json:"url"`
	Field    bool   `json:"field"`
	Tag      string `json:"tag"`
	Password bool   `json:"password"`
	// MaxLength is how many characters the field keeps (-1: no limit).
	MaxLength int `json:"maxLength"`
}

// File is the file an upload_file call names, as the executor read it.
type File struct {
	evidence.FileRef
	// Copy is the session's private copy, given to the browser.
	Copy string
	// Holds are the secrets whose values the file holds: a page's
	// download of a typed value saved in a directory that is also
	// upload_dir, or an operator's file. Attached and sent, the value
	// would go where type_text may not take it
	// (TestUploadedFileCannotCarryTheSecret): it goes only on the secrets'
	// domains, and the page is then held to them as for a typed
	// value.
	Holds []*toolclad.Secret
}

// History is the history entry go_back or go_forward would go to.
type History struct {
	To  string // "" when there is none
	Err error
}

// Dialog is a JavaScript dialog the page opened.
type Dialog struct {
	Type    string // alert, confirm, prompt, beforeunload
	Message string
	Default string // a prompt's default answer
}

// Tab is the tab a tab command (switch_tab, close_tab) names, as list_tabs
// lists it.
type Tab struct {
	ID   string // list_tabs' id ("t1", "t2", ...), stable for the session's lifetime
	Page PageID
	URL  string
	User bool // a tab of the user's own, in the user's browser context
	Home bool // the session's first tab, which closes when the session ends
}

// GroupMember is a page of an adopted tab's browsing-context group that is
// not yet the session's.
type GroupMember struct {
	Page PageID
	URL  string
	// Listed is the page's tab id when list_tabs shows it (a user's tab
	// the scope allows, not another session's): it can be taken with the
	// tab. "" when it cannot be: outside the scope, not a web page, or
	// another session's.
	Listed string
}

// Name is how a refusal names the member: its tab id, or what it is when
// the agent may not see it.
func (g GroupMember) Name() string {
	if g.Listed != "" {
		return "tab " + g.Listed
	}
	return "a tab of the user's that this session may not use (outside the scope, not a web page, or another session's)"
}

// groupOutsiders are the members of a group that the session cannot take
// with the tab, as a refusal names them.
func groupOutsiders(members []GroupMember) []string {
	var out []string
	for _, m := range members {
		if m.Listed == "" {
			out = append(out, m.Name())
		}
	}
	return out
}
