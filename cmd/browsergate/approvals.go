package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/browsergate/browsergate/approval"
	"github.com/browsergate/browsergate/approval/operator"
	"github.com/browsergate/browsergate/evidence"
)

var approvalsListCommand = &command{
	name:     "approvals list",
	synopsis: "--evidence FILE | --socket PATH",
	summary: "List the calls a running browsergate serve holds for a human's approval, oldest first, with\n" +
		"their arguments, the page they act on, where they lead and why they need approval.",
	setup: func(fs *flag.FlagSet) action {
		socket := socketFlags(fs)
		return func(_ []string, stdout, _ io.Writer) error {
			c, err := approvalsClient(socket)
			if err != nil {
				return err
			}
			pending, err := c.List(context.Background())
			if err != nil {
				return err
			}
			printPending(stdout, pending, time.Now())
			return nil
		}
	},
}

var approvalsWatchCommand = &command{
	name:     "approvals watch",
	synopsis: "--evidence FILE | --socket PATH",
	summary: "Wait for calls held for a human's approval and print each as it arrives (as approvals list does),\n" +
		"until interrupted: the operator's terminal, or a pipe to a notifier.",
	setup: func(fs *flag.FlagSet) action {
		socket := socketFlags(fs)
		return func(_ []string, stdout, _ io.Writer) error {
			c, err := approvalsClient(socket)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return watchApprovals(ctx, c, stdout, watchEvery)
		}
	},
}

// watchEvery is how often approvals watch asks the daemon.
const watchEvery = 500 * time.Millisecond

// watchApprovals prints each held call once, as it is first seen, until
// ctx ends or the daemon goes away.
func watchApprovals(ctx context.Context, c *operator.Client, w io.Writer, every time.Duration) error {
	seen := map[string]bool{}
	fmt.Fprintln(w, "waiting for calls held for approval (interrupt to stop)")
	for {
		pending, err := c.List(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		live := map[string]bool{}
		for _, p := range pending {
			live[p.ID] = true
			if !seen[p.ID] {
				printPending(w, []approval.Request{p}, time.Now())
			}
		}
		seen = live
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(every):
		}
	}
}

// approvalsDecideCommand is `approvals approve ID` or `approvals deny ID`.
func approvalsDecideCommand(verb string) *command {
	approve := verb == "approve"
	done := map[bool]string{true: "approved", false: "denied"}[approve]
	summary := "Approve a held call (see approvals list): it runs, and the evidence records who approved it."
	if !approve {
		summary = "Deny a held call (see approvals list): it is refused, and the evidence records who denied it."
	}
	return &command{
		name:       "approvals " + verb,
		synopsis:   "ID --evidence FILE | --socket PATH [--by NAME] [--note TEXT]",
		summary:    summary,
		positional: 1,
		setup: func(fs *flag.FlagSet) action {
			socket := socketFlags(fs)
			by := fs.String("by", currentUser(), "your `NAME`, recorded in the evidence with the decision")
			note := fs.String("note", "", "a note `TEXT` recorded with the decision")
			return func(args []string, stdout, _ io.Writer) error {
				if len(args) == 0 {
					return fmt.Errorf("%w: approvals %s needs the id of a pending approval (see approvals list)", errUsage, verb)
				}
				c, err := approvalsClient(socket)
				if err != nil {
					return err
				}
				ans, err := c.Decide(context.Background(), args[0], operator.Decision{Approve: approve, By: *by, Note: *note})
				if err != nil {
					return err
				}
				fmt.Fprintf(stdout, "%s: %s by %s\n", args[0], done, ans.By)
				return nil
			}
		},
	}
}

// socketFlag says where the daemon's approvals socket is: --socket, or
// beside --evidence.
type socketFlag struct{ socket, evidence *string }

// socketFlags declares --socket and --evidence.
func socketFlags(fs *flag.FlagSet) *socketFlag {
	return &socketFlag{
		socket:   fs.String("socket", "", "the daemon's approvals socket `PATH` (default: beside --evidence)"),
		evidence: fs.String("evidence", "", "the daemon's evidence `FILE`, to find its socket"),
	}
}

// approvalsClient connects to the socket the flags name.
func approvalsClient(f *socketFlag) (*operator.Client, error) {
	socket := *f.socket
	if socket == "" {
		if *f.evidence == "" {
			return nil, fmt.Errorf("%w: approvals needs --socket or --evidence", errUsage)
		}
		socket = operator.DefaultSocket(*f.evidence)
	}
	return operator.NewClient(socket)
}

func currentUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

// printPending prints the held calls for a human: each with its deadline
// as a full date and time with its zone, and how long is left at now.
func printPending(w io.Writer, pending []approval.Request, now time.Time) {
	if len(pending) == 0 {
		fmt.Fprintln(w, "no calls are waiting for approval")
		return
	}
	// The page and where the call leads are the page's words, the
	// arguments the agent's: shown as `evidence show` shows them, hidden
	// and control characters escaped (evidence.VisibleLine).
	line := evidence.VisibleLine
	for _, p := range pending {
		args, _ := json.Marshal(p.Args)
		if len(p.Args) == 0 {
			args = []byte("{}") // a call with no arguments, as the console and the evidence show it (not null)
		}
		fmt.Fprintf(w, "%s  (%s left, until %s)  session %s\n", line(p.ID), p.Deadline.Sub(now).Round(time.Second),
			p.Deadline.UTC().Format(time.RFC3339), line(p.Session))
		if p.Replica != "" {
			fmt.Fprintf(w, "  held:   on replica %s of the fleet (answered here, the answer goes to it through the fleet's store; a secret answer is given there)\n", line(p.Replica))
		}
		if p.Agent != "" {
			fmt.Fprintf(w, "  agent:  %s\n", line(p.Agent))
		}
		if p.IsQuestion() {
			// The agent's own words: shown as text, escaped as the
			// arguments are, never as a line of this listing.
			kind := "question"
			if p.SecretAnswer {
				kind = "question, secret answer"
			}
			fmt.Fprintf(w, "  asks:   %s (%s; answer with approvals answer %s, or deny it)\n", evidence.Visible(strconv.Quote(p.Question)), kind, line(p.ID))
		}
		fmt.Fprintf(w, "  call:   %s %s\n", line(p.Tool), evidence.Visible(string(args)))
		fmt.Fprintf(w, "  page:   %s\n", line(p.Page))
		if p.URL != "" && p.URL != p.Page {
			fmt.Fprintf(w, "  leads:  %s\n", line(p.URL))
		}
		if p.Tier != "" {
			fmt.Fprintf(w, "  tier:   %s\n", line(p.Tier))
		}
		fmt.Fprintf(w, "  why:    %s\n\n", line(strings.Join(p.Why, "; ")))
	}
}
