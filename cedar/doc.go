// Package cedar decides each browser command an agent calls with Cedar
// policies (cedar-go), and explains every decision.
//
// An [Engine] is built once by [LoadDir] from every *.cedar file of a
// directory and is then immutable, so [Engine.Decide] is safe for concurrent
// use and does no parsing on the hot path. A policy is named by its @id
// annotation, or by "file.cedar:line" when it has none; those names are the
// PolicyIDs cedar-go reports and the ones a [Decision] carries.
//
// # The request
//
// Decide turns a [Request] into a Cedar request:
//
//	principal  Web::Agent::"<Principal>"
//	action     Web::Action::"<Action>"
//	resource   <ResourceType>::"<Session>"  (default type Web::BrowserSession)
//	context    { time: <unix millis> }
//
// The resource entity carries the attributes tool, command, args (record),
// url, url_domain (the entity Web::Domain::"<host>", whose parents are the
// Web::DomainSet entities named in DomainSets), page_state (record),
// risk_tier, human_approved, interaction_count, time_ms, and one Long
// attribute per counter (session_submit_count, ...).
//
// # Failing closed
//
// cedar-go skips a policy whose evaluation errors and may still allow the
// request on another permit. browsergate does not: any evaluation error
// denies, with the error in [Decision.Errors] and a reason naming the
// policy. So an attribute a policy reads must be present: a manifest whose
// page state lacks is_authenticated makes every submit_form decision fail
// (and be denied) under the shipped policies, rather than silently pass.
// Decide never panics; an internal error is a denial with a reason.
package cedar
