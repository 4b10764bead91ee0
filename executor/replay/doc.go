// Package replay runs the calls of one recorded session again, in a fresh
// launched browser, under the manifest and policies the session recorded,
// and reports each step whose outcome differs from the record.
//
// The log says what ran; it does not get to choose what the replay starts
// or reads on the auditor's machine. Only a log that verifies is replayed
// (against the signing key when the auditor has it). The browser is always
// a launched, headless Chromium, never a recorded executable or live
// endpoint, and a secret is read only from where the auditor says
// (Options.Secrets), never from the recorded environment variable or file.
package replay
