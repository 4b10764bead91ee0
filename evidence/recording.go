package evidence

import (
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// A record's recording (spec revision 17): the frames of the screencast of
// the call and the traces it recorded, each stored once in the
// recordings bucket under its SHA-256, like a screenshot, and named in
// order by the record's recording member. The hash of the record covers
// the names, so the chain still verifies; Verify checks that every blob a
// record names is there and hashes to its name.

// bucketRecordings holds the recording blobs, keyed by lowercase hex
// SHA-256.
var bucketRecordings = []byte("recordings")

// The kinds of a RecordingRef.
const (
	// RecordingFrame is a screencast frame: a JPEG of the tab's viewport.
	RecordingFrame = "frame"
	// RecordingTrace is a performance trace: the JSON of its trace events
	// ({"traceEvents":[…]}), as the browser's Tracing domain gave them.
	RecordingTrace = "trace"
)

// BlobRecording is the Problem.Blob (and Blob.Kind) of a recording blob.
const BlobRecording = "recording"

// RecordingRef names one blob of a record's recording. Append stores Data
// under its SHA-256 and fills SHA256 and Size from it; Data is not part
// of the record.
type RecordingRef struct {
	Kind   string `json:"kind"` // RecordingFrame or RecordingTrace
	SHA256 string `json:"sha256"`
	Size   int    `json:"size"`
	Data   []byte `json:"-"`
}

// fillRecording checks the recording of an envelope about to be appended
// and names each blob by its hash.
func fillRecording(refs []RecordingRef) ([]RecordingRef, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	out := make([]RecordingRef, len(refs))
	for i, r := range refs {
		if r.Kind != RecordingFrame && r.Kind != RecordingTrace {
			return nil, fmt.Errorf("%w: recording[%d] has kind %q, want %q or %q", ErrInvalidEnvelope, i, r.Kind, RecordingFrame, RecordingTrace)
		}
		if len(r.Data) == 0 {
			return nil, fmt.Errorf("%w: recording[%d] has no bytes", ErrInvalidEnvelope, i)
		}
		out[i] = RecordingRef{Kind: r.Kind, SHA256: sha256Hex(r.Data), Size: len(r.Data), Data: r.Data}
	}
	return out, nil
}

// putRecording stores the blobs of a recording, each once.
func putRecording(tx *bolt.Tx, refs []RecordingRef) error {
	if len(refs) == 0 {
		return nil
	}
	b := tx.Bucket(bucketRecordings)
	for _, r := range refs {
		if b.Get([]byte(r.SHA256)) == nil {
			if err := b.Put([]byte(r.SHA256), r.Data); err != nil {
				return err
			}
		}
	}
	return nil
}

// recordingOf reads the hashes a stored record's recording member names;
// a member of the wrong shape is an error.
func recordingOf(obj map[string]any) ([]string, error) {
	v, ok := obj["recording"]
	if !ok {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("recording is not an array")
	}
	var out []string
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("recording[%d] is not an object", i)
		}
		sum, ok := m["sha256"].(string)
		if !ok || !isSHA256Hex(sum) {
			return nil, fmt.Errorf("recording[%d].sha256 is not a lowercase hex SHA-256", i)
		}
		out = append(out, sum)
	}
	return out, nil
}

// BlobsOf lists the blobs a stored record names (screenshot, config and
// recording), without their data, each once: what a copy of the record
// must carry with it. A record that does not parse names none.
func BlobsOf(raw []byte) []Blob {
	var refs struct {
		Screenshot string         `json:"screenshot_sha256"`
		Config     string         `json:"config_sha256"`
		Recording  []RecordingRef `json:"recording"`
	}
	if json.Unmarshal(raw, &refs) != nil {
		return nil
	}
	var out []Blob
	add := func(kind, sum string) {
		for _, b := range out {
			if b.Kind == kind && b.SHA256 == sum {
				return
			}
		}
		if sum != "" {
			out = append(out, Blob{Kind: kind, SHA256: sum})
		}
	}
	add(BlobScreenshot, refs.Screenshot)
	add(BlobConfig, refs.Config)
	for _, r := range refs.Recording {
		add(BlobRecording, r.SHA256)
	}
	return out
}

// recordingCounts counts the frames and the traces of a recording.
func recordingCounts(refs []RecordingRef) (frames, traces int) {
	for _, r := range refs {
		if r.Kind == RecordingTrace {
			traces++
		} else {
			frames++
		}
	}
	return frames, traces
}

// blobBucket is the bucket that holds blobs of a kind.
func blobBucket(kind string) ([]byte, error) {
	switch kind {
	case BlobScreenshot:
		return bucketScreenshots, nil
	case BlobConfig:
		return bucketConfigs, nil
	case BlobRecording:
		return bucketRecordings, nil
	}
	return nil, fmt.Errorf("unknown blob kind %q", kind)
}

// Recording returns the recording blob stored under its lowercase hex
// SHA-256 (a frame or a trace).
func (s *Store) Recording(sha256hex string) ([]byte, error) {
	return s.blob(bucketRecordings, sha256hex, ErrNoRecording, "recording")
}
