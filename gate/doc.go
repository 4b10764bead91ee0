// Package gate is browsergate's decision on one call: a question in, a
// verdict out. The question is the call (its command and typed
// arguments), the facts the executor observed of the browser before it
// (Facts), and what the call runs under: the manifest's compiled scope,
// the Cedar policies, the session's limits and secrets. Decide answers
// with a Verdict: a refusal (a DenyError naming the stage, the rule and
// the reason), or what the call needs (a human's approval) and what
// acting on it involves; and, either way, what the browser must be made to
// do (reset a tab, close popups). After judges, the same way, where an
// action left the session's tabs.
//
// The package never touches a browser: it imports no CDP client and reads
// no page. The executor observes, gate decides, and the executor enforces
// and acts; so every rule here runs in a test with facts given by hand,
// and a fact that could not be read is a refusal, never a guess (fail
// closed).
//
// The command table stays the executor's. What the decision needs of a
// command beyond its manifest entry (what it observes, whether it changes
// the tab the session acts in) comes in with the Question, so that adding
// a command is an entry in that table, its schema and its policies, and
// no edit here.
//
// Beside the decision the package holds the session's state it reads:
// the limits' counters (Limits), the rules a secret is typed, attached and
// sent by (Secrets), the secrets typed on the current page
// (TypedSecrets), and the binding that holds a page a secret was typed
// into to the secret's domains (SecretBinding), which the executor's
// request guard consults for every request; and the origins outside
// allowed_domains a human approved a navigate to (OutsideOrigins, see
// outside.go), which the session's check lets its pages reach.
package gate
