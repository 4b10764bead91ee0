package evidence

// Stage names where the gate reached its decision on a call: the first
// stage that refused it, or StageGate when every stage let it through. The
// executor, the envelope and replay all use these names; they are part of
// the evidence format (docs/evidence-format.md), so a name never changes
// meaning.
type Stage string

// The stages, in the order a call meets them.
const (
	// StageManifest: the tool is not one the manifest declares (an agent
	// probing for tools it was not given), or a click would submit a form
	// and the manifest does not declare submit_form.
	StageManifest Stage = "manifest"
	// StageArgs: the arguments do not fit the command's typed signature, or
	// the element they name cannot be found or is not what the command
	// needs (not in a form, say).
	StageArgs Stage = "args"
	// StageLimits: the session has expired (session_timeout_seconds,
	// idle_timeout_seconds) or used up max_interactions; in a record of
	// kind session_end with rule "ended by the operator", an operator
	// ended the session (from the console); for a page's
	// download (kind page_download), also: larger than max_download_bytes,
	// or the session ended before it did.
	StageLimits Stage = "limits"
	// StageObserve: what the decision needs could not be read from the
	// browser (the page state, the tab's history), so the call cannot be
	// judged.
	StageObserve Stage = "observe"
	// StageScope: a URL the call is about — an argument, where a click,
	// submit or go_back leads, the page the tab or a popup is on — is
	// outside the manifest's scope.
	StageScope Stage = "scope"
	// StageSecrets: a manifest secret would be typed or sent where its
	// domains do not allow.
	StageSecrets Stage = "secrets"
	// StageCedar: the Cedar policies deny the call.
	StageCedar Stage = "cedar"
	// StageApproval: the call needed a human's approval and did not get it
	// (denied, no answer in time, no channel, or the call or page changed
	// while it was held).
	StageApproval Stage = "approval"
	// StageAct: the browser could not be reached to carry out the call;
	// for a page's download, also: cancelled by the page or the browser,
	// or its file could not be saved.
	StageAct Stage = "act"
	// StageDestination: while the action ran, the page sent a navigation
	// or a form submission the gate had not judged (another URL than the
	// one judged, or a submission where none was); the request was stopped
	// before it left, and the tab reset.
	StageDestination Stage = "destination"
	// StageFinalURL: the action ran, and where it left the tab or a popup
	// is outside the scope (or could not be read); the tab was reset.
	StageFinalURL Stage = "final_url"
	// StageGate: every stage let the call through.
	StageGate Stage = "gate"
	// StageEgress is not a call's: a record of kind session_end, of
	// requests the session's pages made after its last call that the
	// egress gate refused, or (spec revision 12, rule "recorded after
	// the last call") of permission requests [browser.permissions]
	// granted them alone. The latter refused nothing: its decision is
	// stored as refused, as older readers expect, and shown as RECORDED
	// (Envelope.RecordsOnly).
	StageEgress Stage = "egress"
)
