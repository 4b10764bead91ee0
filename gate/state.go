package gate

// PageState is what the executor observes of a session's tab before and
// after each action. Cedar sees every field; the agent sees the fields the
// manifest lists in [browser.state]. No field comes from the page's own
// JavaScript world, so a page cannot forge what the gate judges (how the
// executor reads each one is told at executor.PageState).
type PageState struct {
	URL             string `json:"url"`
	Title           string `json:"title"`
	Domain          string `json:"domain"`
	HasForms        bool   `json:"has_forms"`
	IsAuthenticated bool   `json:"is_authenticated"`
	PageLoaded      bool   `json:"page_loaded"`
	TabCount        int    `json:"tab_count"`
	// HTTPStatus is the document's HTTP status as its navigation timing
	// entry reports it (isolated world; 0: unknown). Not a state field:
	// neither Cedar nor the evidence's states have it (Map), only a
	// navigate's reply text.
	HTTPStatus int `json:"-"`
	// Tab is the target id of the tab it was read from ("": not known):
	// who chose its URL is that tab's to say. Not a state field either.
	Tab string `json:"-"`
	// Doc names the document its URL was read from (the executor's: the
	// tab's main frame's loader id; "": not read), whose credit the URL
	// is masked with. Not a state field either.
	Doc string `json:"-"`
}

// Map returns the state as a record keyed by the [browser.state] field
// names.
func (p PageState) Map() map[string]any {
	return map[string]any{
		"url":              p.URL,
		"title":            p.Title,
		"domain":           p.Domain,
		"has_forms":        p.HasForms,
		"is_authenticated": p.IsAuthenticated,
		"page_loaded":      p.PageLoaded,
		"tab_count":        p.TabCount,
	}
}

// Select returns only the named fields, in a map (for the agent's reply).
func (p PageState) Select(fields []string) map[string]any {
	all := p.Map()
	out := make(map[string]any, len(fields))
	for _, f := range fields {
		if v, ok := all[f]; ok {
			out[f] = v
		}
	}
	return out
}
