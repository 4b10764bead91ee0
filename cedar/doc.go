// Package cedar decides each browser command an agent calls with Cedar
// policies (cedar-go), and explains every decision.
//
// An [Engine] is built once by [LoadDir] from every *.cedar file of a
// directory and is then immutable, so [Engine.Decide] is safe for concurrent
// use and does no parsing on the hot path. A policy is named by its @id
// annotation, or by "file.cedar:line" when it has none; those names are the
// PolicyIDs cedar-go reports and the ones a [Decision] carries.
//
// # The schema
//
// A policy directory holds at most one schema, a *.cedarschema file in
// Cedar's human-readable format; browsergate ships
// policies/browsergate.cedarschema, which declares exactly the request
// below, and builds it into the binary: [LoadDirWith] uses
// [LoadOptions].DefaultSchema for a directory without a schema, and
// [Engine.SchemaFile] then says "built-in schema (browsergate.cedarschema)".
// (This package embeds nothing itself, so that it stays a leaf; the caller
// passes the bytes.) A directory's own schema must fit the requests the
// daemon sends: given [LoadOptions].Shapes, LoadDirWith checks a
// representative request of every command against it and refuses the
// directory with [ErrSchemaMismatch], naming the schema file and what does
// not fit (an attribute the daemon sends and the schema lacks, one the
// schema requires and the daemon never sends, another type). LoadDir validates every policy against it in strict mode
// (cedar-go's x/exp/schema/validate), so a misspelt attribute
// (resource.comand), a comparison of the wrong types (resource.risk_tier
// == 3) or an unknown entity type refuses the whole directory, with each
// problem as a [*ValidationError] at file:line:col naming the policy. A
// missing schema with no default is [ErrNoSchema]; a broken one a
// [*SchemaError].
// [Engine.ValidateRequest] checks a request and the entities Decide builds
// from it against the same schema, so the code that builds requests can
// prove in its tests that they conform.
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
// attribute per counter: session_submit_count and session_<command>_count
// for each of [BuiltinCommands]. The args record's attributes are optional
// in the schema (a policy tests `resource.args has url` first); all other
// attributes are always present.
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
//
// # Approvals
//
// A policy that a human's approval lifts says so in Cedar:
//
//	forbid (...) when { ... } unless { resource.human_approved == true };
//
// [Decision.NeedsApproval] reports a call denied only by such policies:
// it is true when the request was denied without evaluation errors, its
// HumanApproved was false, and the same request with HumanApproved true is
// allowed (Decide evaluates it a second time to know). A default deny, a
// forbid with no such clause (the submit rate limit) or an evaluation
// error leaves it false: asking a human would not change the outcome. The
// shipped "critical-needs-approval" policy makes every command the
// manifest rates critical such a call.
//
// # Policy tests
//
// A policy directory may carry policy-tests.json ([PolicyTestsFile]), an
// array of cases {"name", "request", "expect": "allow"|"deny", optional
// "policies" (the determining policy ids) and "needs_approval"}.
// [ParseRequestJSON] reads each request (snake_case keys mirroring
// [Request], strict, with short defaults) and [Engine.RunTests] runs the
// cases, reporting each as a [TestResult].
package cedar
