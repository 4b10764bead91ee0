package toolclad

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// Anchor is an anchor file: where a fleet's transparency log lives, the
// key that signs its checkpoints (serve --anchor) or the key that checks
// them (evidence verify --central), and its copy in an S3 bucket with
// Object Lock (docs/fleet.md, "Anchoring"). The S3 credentials come from
// the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), never the
// file.
type Anchor struct {
	Path string
	// Dir is the log's directory on this replica. With a [copy], an
	// anchorer whose directory is behind the bucket restores the log from
	// it: the replicas that may anchor need not share one.
	Dir string
	// KeyFile holds the note signing key of the log's checkpoints
	// (evidence keygen --log); VerifierKeyFile its verifier key. Paths
	// are relative to the file's directory.
	KeyFile, VerifierKeyFile string
	// Copy is the bucket the log is copied to (nil: none).
	Copy *AnchorCopy
	// CheckpointInterval is how often the log signs a checkpoint while it
	// grows (checkpoint_interval, 100ms to 1m); AnchorEvery how often the
	// anchorer looks for records to anchor (anchor_every, 10ms to 1m). Zero means
	// the defaults (anchor.DefaultCheckpointInterval,
	// central.DefaultAnchorEvery).
	CheckpointInterval, AnchorEvery time.Duration
	// RoundTimeout bounds one round of anchoring and copying
	// (round_timeout, 1s to 10m; zero: central.DefaultAnchorRoundWait):
	// a replica that takes over from one that lost the lock waits it
	// out (and 15 s more) before it touches the bucket.
	RoundTimeout time.Duration
}

// Least values of an anchor file's durations: Tessera's POSIX log signs
// no more often than every 100 ms.
const (
	MinCheckpointInterval = 100 * time.Millisecond
	MinAnchorEvery        = 10 * time.Millisecond
)

// Greatest values of an anchor file's durations: an anchoring round waits
// at most 2 minutes for a checkpoint to cover its leaves, and the anchorer
// holds the fleet's lock between rounds.
const (
	MaxCheckpointInterval = time.Minute
	MaxAnchorEvery        = time.Minute
	MinRoundTimeout       = time.Second
	MaxRoundTimeout       = 10 * time.Minute
)

// AnchorCopy is an anchor file's [copy]: an S3 bucket with Object Lock.
type AnchorCopy struct {
	Endpoint, Region, Bucket, Prefix string
	// Retention is how long each object is held in compliance mode.
	Retention time.Duration
	// PathStyle addresses the bucket as host/bucket (gateways such as
	// versitygw and MinIO need it).
	PathStyle bool
}

// LoadAnchor reads and checks the anchor file at path; a file wrong in any
// way yields a *LoadError listing every problem.
func LoadAnchor(path string) (*Anchor, error) {
	doc, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load anchor file: %w", err)
	}
	return ParseAnchor(path, doc)
}

// ParseAnchor checks an anchor file held in memory; name is the file name
// its problems give, and the directory relative paths are taken from.
func ParseAnchor(name string, doc []byte) (*Anchor, error) {
	var root map[string]any
	if err := toml.Unmarshal(doc, &root); err != nil {
		return nil, &LoadError{Problems: []Problem{syntaxProblem(name, err)}}
	}
	r := &reader{file: name, pos: indexPositions(doc)}
	top := r.table(nil, root)
	a := &Anchor{Path: name}
	base := filepath.Dir(name)
	// Every path is cleaned: a dir written "/x/log/" is the directory
	// /x/log, not a name that DIR+".restoring" would put inside it.
	rel := func(p string) string {
		if p == "" {
			return p
		}
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(base, p)
	}
	top.str("dir", &a.Dir)
	top.str("key_file", &a.KeyFile)
	top.str("verifier_key_file", &a.VerifierKeyFile)
	a.Dir, a.KeyFile, a.VerifierKeyFile = rel(a.Dir), rel(a.KeyFile), rel(a.VerifierKeyFile)
	if top.duration("checkpoint_interval", &a.CheckpointInterval, MinCheckpointInterval) && a.CheckpointInterval > MaxCheckpointInterval {
		r.errorf(top.at("checkpoint_interval"), "%s is more than %s: an anchoring round waits at most 2 minutes for a checkpoint", a.CheckpointInterval, MaxCheckpointInterval)
	}
	if top.duration("anchor_every", &a.AnchorEvery, MinAnchorEvery) && a.AnchorEvery > MaxAnchorEvery {
		r.errorf(top.at("anchor_every"), "%s is more than %s: the anchorer holds the fleet's lock while it waits", a.AnchorEvery, MaxAnchorEvery)
	}
	if top.duration("round_timeout", &a.RoundTimeout, MinRoundTimeout) {
		if a.RoundTimeout > MaxRoundTimeout {
			r.errorf(top.at("round_timeout"), "%s is more than %s: a replica taking over waits a round out before it anchors", a.RoundTimeout, MaxRoundTimeout)
		} else if interval := cmp.Or(a.CheckpointInterval, time.Second); a.RoundTimeout < 2*interval {
			r.errorf(top.at("round_timeout"), "%s is less than twice checkpoint_interval (%s): a round waits for a checkpoint that covers its leaves", a.RoundTimeout, interval)
		}
	}
	if top.has("copy") {
		c := top.sub("copy")
		a.Copy = &AnchorCopy{}
		c.str("endpoint", &a.Copy.Endpoint)
		c.str("region", &a.Copy.Region)
		if !c.str("bucket", &a.Copy.Bucket) && !c.has("bucket") {
			r.errorf(c.path, "missing bucket: the S3 bucket, with Object Lock, the log is copied to")
		}
		c.str("prefix", &a.Copy.Prefix)
		if a.Copy.Prefix != "" && !strings.HasSuffix(a.Copy.Prefix, "/") {
			r.errorf(c.at("prefix"), "%q: a prefix ends with /", a.Copy.Prefix)
		}
		var days int64
		if c.integer("retention_days", &days) {
			if days < 1 || days > 36500 {
				r.errorf(c.at("retention_days"), "must be between 1 and 36500 days, got %d", days)
			}
			a.Copy.Retention = time.Duration(days) * 24 * time.Hour
		} else if !c.has("retention_days") {
			r.errorf(c.path, "missing retention_days: how long Object Lock holds each object of the copy")
		}
		c.boolean("path_style", &a.Copy.PathStyle)
		c.done()
	}
	if a.Dir == "" && a.Copy == nil {
		r.errorf(nil, "neither dir nor [copy]: the file names no log")
	}
	if a.KeyFile == "" && a.VerifierKeyFile == "" {
		r.errorf(nil, "neither key_file (serve: signs checkpoints) nor verifier_key_file (evidence verify --central: checks them)")
	}
	top.done()
	if len(r.problems) > 0 {
		sortProblems(r.problems)
		return nil, &LoadError{Problems: r.problems}
	}
	return a, nil
}
