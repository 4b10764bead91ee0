package evidence

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Bucket and key names; docs/evidence-format.md describes each.
var (
	bucketMeta        = []byte("meta")
	bucketSessions    = []byte("sessions")
	bucketHeads       = []byte("heads")
	bucketScreenshots = []byte("screenshots")
	bucketConfigs     = []byte("configs")
	bucketPruned      = []byte("pruned")
	keyFormatVersion  = []byte("format_version")
	keyLogHead        = []byte("log_head")
	keyLogSet         = []byte("log_set")
	keyLogID          = []byte("log_id")
	bucketOpen        = []byte("open")
)

// Options configures Open. A nil *Options, or a zero field, means the
// documented default.
type Options struct {
	// ReadOnly opens the file with a shared lock and no writes, so that
	// `evidence show` and `verify` run beside other readers. bbolt lets one
	// process at a time hold a file for writing (and a writer excludes
	// readers of other processes), so a read-only open waits for the daemon
	// to let go, up to Timeout.
	ReadOnly bool
	// Timeout is how long to wait for bbolt's file lock: DefaultTimeout
	// when zero, indefinitely when negative.
	Timeout time.Duration
	// Now stamps envelopes whose Time is zero; time.Now when nil. Tests
	// inject a fixed clock.
	Now func() time.Time
	// OutputLimit is how many bytes of output an envelope keeps:
	// DefaultOutputLimit when zero or negative.
	OutputLimit int
	// SigningKey, when set, signs every session's head: each Append stores
	// an ed25519 signature over the new head (HeadMessage) beside it, so
	// that VerifyWithKey can tell a head written by this store from one
	// rewritten by someone who can edit the file but does not hold the
	// key. It signs the log-wide head too (every Append and Prune), so
	// that VerifyWithKey can tell when a whole session is missing. nil
	// means unsigned heads. Ignored when ReadOnly.
	SigningKey ed25519.PrivateKey
}

// Store is an open evidence log. All methods are safe for concurrent use:
// bbolt serialises writers and gives each reader a consistent snapshot.
type Store struct {
	db    *bolt.DB
	opts  Options
	keyID string // KeyID of the signing key's public half; "" when unsigned
	// wmu serialises the write transactions that extend the log-wide
	// head with log, the head this store last wrote or checked (bbolt
	// serialises the transactions, but log is kept after one commits).
	wmu sync.Mutex
	log logState
	// signed: the log as opened has a signed head (log-wide or a
	// session's), so a writer without the key may not extend it.
	signed bool
	// logID names this file's log (meta/log_id); "" in a file opened
	// read-only that was written before revision 14.
	logID string
	// changed gets a value (without blocking) after every write
	// transaction that changed records, heads or blobs.
	changed chan struct{}
	// acknowledge is what SetAcknowledge set.
	acknowledge func(session string, seq uint64) error
}

// SetAcknowledge makes Append, after the record is committed to the file,
// call ack with its session and sequence number; an error ack returns is
// Append's (wrapping ErrNotAcknowledged), with the record kept in the
// file and the envelope filled. A daemon that replies only after a central
// store holds the record waits there. Call it before the first Append.
func (s *Store) SetAcknowledge(ack func(session string, seq uint64) error) { s.acknowledge = ack }

// LogID is the random id that names this file's log among others (the
// logs of a fleet's replicas in a central store): meta/log_id, made when
// the file was created, or when a file from before revision 14 was first
// opened for writing. "" for such a file opened read-only.
func (s *Store) LogID() string { return s.logID }

// Changed delivers a value after a write (an append, a config, a prune)
// committed since the last value was taken: one reader, such as a
// shipper, wakes on it and reads what is new. Values do not pile up.
func (s *Store) Changed() <-chan struct{} { return s.changed }

// changedNow wakes the reader of Changed, if it is not awake already.
func (s *Store) changedNow() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// Signed reports whether the log, as this writer opened it, is signed (a
// signed log-wide head, or a signed session head in a log written before
// log-wide heads): a store without the signing key refuses to append to
// it (ErrNeedKey). Always false on a store opened ReadOnly.
func (s *Store) Signed() bool { return s.signed }

// Open opens (creating when needed and not ReadOnly) the evidence log at
// path. A file written by a newer format version is refused with
// ErrNewerFormat, a bbolt file that is not an evidence log with
// ErrNotEvidence, and a SigningKey that is not an ed25519 private key
// with ErrBadKey.
func Open(path string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	var keyID string
	if o.ReadOnly {
		o.SigningKey = nil
	} else if o.SigningKey != nil {
		if len(o.SigningKey) != ed25519.PrivateKeySize {
			return nil, fmt.Errorf("open evidence %s: %w: signing key has %d bytes, want %d",
				path, ErrBadKey, len(o.SigningKey), ed25519.PrivateKeySize)
		}
		keyID = KeyID(o.SigningKey.Public().(ed25519.PublicKey))
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.OutputLimit <= 0 {
		o.OutputLimit = DefaultOutputLimit
	}
	bo := &bolt.Options{Timeout: max(o.Timeout, 0), ReadOnly: o.ReadOnly}
	db, err := openCurrent(path, bo)
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("open evidence %s: %w after %s", path, ErrLocked, o.Timeout)
	}
	if err != nil {
		return nil, fmt.Errorf("open evidence %s: %w", path, err)
	}
	s := &Store{db: db, opts: o, keyID: keyID, changed: make(chan struct{}, 1)}
	if o.ReadOnly {
		err = db.View(checkFormat)
	} else if err = db.Update(initFormat); err == nil {
		err = db.View(s.loadLog)
	}
	if err == nil {
		err = db.View(func(tx *bolt.Tx) error {
			s.logID = string(tx.Bucket(bucketMeta).Get(keyLogID))
			return nil
		})
	}
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open evidence %s: %w", path, err)
	}
	return s, nil
}

// checkFormat accepts files whose format version this package can read.
func checkFormat(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		return fmt.Errorf("%w: no meta bucket", ErrNotEvidence)
	}
	v, err := strconv.Atoi(string(meta.Get(keyFormatVersion)))
	if err != nil || v < 1 {
		return fmt.Errorf("%w: bad format version %q", ErrNotEvidence, meta.Get(keyFormatVersion))
	}
	if v > FormatVersion {
		return fmt.Errorf("%w: %d (this build reads %d)", ErrNewerFormat, v, FormatVersion)
	}
	return nil
}

// initFormat creates the buckets of an empty file, or checks an existing one.
func initFormat(tx *bolt.Tx) error {
	if tx.Bucket(bucketMeta) != nil {
		if err := checkFormat(tx); err != nil {
			return err
		}
	} else {
		empty := true
		_ = tx.ForEach(func([]byte, *bolt.Bucket) error { empty = false; return nil })
		if !empty {
			return fmt.Errorf("%w: has buckets but no meta bucket", ErrNotEvidence)
		}
		meta, err := tx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		if err := meta.Put(keyFormatVersion, []byte(strconv.Itoa(FormatVersion))); err != nil {
			return err
		}
	}
	for _, name := range [][]byte{bucketSessions, bucketHeads, bucketScreenshots, bucketConfigs, bucketPruned, bucketOpen, bucketRecordings} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	if meta := tx.Bucket(bucketMeta); meta.Get(keyLogID) == nil {
		return meta.Put(keyLogID, []byte(newLogID()))
	}
	return nil
}

// newLogID is a new log's id: 16 random bytes in lowercase hex.
func newLogID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24 and later)
	return hex.EncodeToString(b[:])
}

// Close releases the file and its lock.
func (s *Store) Close() error {
	return s.db.Close()
}

// Backup writes a consistent copy of the whole bbolt file to w from one
// read transaction, while appends go on. bbolt lets only one process open
// the file for writing, so this is how a running daemon hands a log to an
// auditor (who opens the copy ReadOnly and verifies it).
func (s *Store) Backup(w io.Writer) (int64, error) {
	var n int64
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		n, err = tx.WriteTo(w)
		return err
	})
	if err != nil {
		return n, fmt.Errorf("backup evidence: %w", err)
	}
	return n, nil
}

// seqKey is the 8-byte big-endian key of a record, so bbolt's byte order
// is sequence order.
func seqKey(seq uint64) []byte {
	return binary.BigEndian.AppendUint64(nil, seq)
}

// Append adds e to its session's chain and returns once the bbolt
// transaction holding it (record, head and screenshot together) is
// committed and fsynced. It fills e's Version, Seq, PrevHash, Hash,
// OutputSHA256 (of the whole output), Output and OutputTruncated (when the
// output exceeds OutputLimit), ScreenshotSHA256 (from screenshot, stored
// under that hash; "" when screenshot is empty), LogN and Time when zero
// (converted to UTC in any case). In the same transaction it makes the
// next log-wide head, which takes the session's old head out of its set
// and puts the new one in. With Options.SigningKey it also signs the
// session's new head and the log-wide head. On error e is left unchanged.
//
// A non-empty e.ConfigSHA256 must name a blob stored with PutConfig
// (ErrNoConfig otherwise): a record never refers to a configuration the
// log does not hold.
//
// Append refuses (ErrCorrupt) to extend a chain whose head and records
// disagree in a way it never leaves them (records but no head, a head
// naming a missing record, a record already at the next seq): evidence is
// never overwritten, and the caller fails closed until an operator looks.
// So does a log-wide head changed behind the store's back since it last
// wrote one.
//
// After SetAcknowledge, Append then waits for it (outside the lock
// that orders appends, so that other appends go on meanwhile).
func (s *Store) Append(e *Envelope, screenshot []byte) error {
	if err := s.append(e, screenshot); err != nil {
		return err
	}
	s.changedNow()
	if s.acknowledge != nil {
		if err := s.acknowledge(e.Session, e.Seq); err != nil {
			return fmt.Errorf("append evidence: session %s record %d is in the file, but %w: %w", e.Session, e.Seq, ErrNotAcknowledged, err)
		}
	}
	return nil
}

func (s *Store) append(e *Envelope, screenshot []byte) error {
	if s.opts.ReadOnly {
		return ErrReadOnly
	}
	if e == nil {
		return fmt.Errorf("%w: nil envelope", ErrInvalidEnvelope)
	}
	if e.Session == "" || len(e.Session) > MaxSessionIDLen || !utf8.ValidString(e.Session) {
		// The id is both a bbolt key and a JSON string: invalid UTF-8 would
		// be stored differently in each, and verify would flag the record.
		return fmt.Errorf("%w: session id must be 1..%d bytes of UTF-8", ErrInvalidEnvelope, MaxSessionIDLen)
	}
	if e.ConfigSHA256 != "" && !isSHA256Hex(e.ConfigSHA256) {
		return fmt.Errorf("%w: config_sha256 %q is not a lowercase hex SHA-256", ErrInvalidEnvelope, e.ConfigSHA256)
	}
	rec := *e
	rec.Version = FormatVersion
	if rec.Time.IsZero() {
		rec.Time = s.opts.Now()
	}
	rec.Time = rec.Time.UTC()
	rec.OutputSHA256 = sha256Hex([]byte(rec.Output))
	rec.Output, rec.OutputTruncated = truncateOutput(rec.Output, s.opts.OutputLimit)
	rec.ScreenshotSHA256 = ""
	if len(screenshot) > 0 {
		rec.ScreenshotSHA256 = sha256Hex(screenshot)
	}
	var err error
	if rec.Recording, err = fillRecording(rec.Recording); err != nil {
		return fmt.Errorf("append evidence: %w", err)
	}
	rec.Seq, rec.PrevHash, rec.Hash, rec.LogN = 0, "", "", 0
	// Encode everything but seq, prev_hash and log_n outside the write lock.
	obj, err := envelopeObject(&rec)
	if err != nil {
		return fmt.Errorf("append evidence: %w", err)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var lw *logWriter
	err = s.db.Update(func(tx *bolt.Tx) error {
		heads := tx.Bucket(bucketHeads)
		sessions, err := tx.Bucket(bucketSessions).CreateBucketIfNotExists([]byte(rec.Session))
		if err != nil {
			return err
		}
		var h head
		var old *head
		if raw := heads.Get([]byte(rec.Session)); raw != nil {
			if err := json.Unmarshal(raw, &h); err != nil {
				return fmt.Errorf("%w: head of session %q: %w", ErrCorrupt, rec.Session, err)
			}
			old = &h
		} else if k, _ := sessions.Cursor().First(); k != nil {
			return fmt.Errorf("%w: session %q has records but no head", ErrCorrupt, rec.Session)
		}
		if h.Seq > 0 && sessions.Get(seqKey(h.Seq)) == nil {
			return fmt.Errorf("%w: head of session %q names record %d, which is missing", ErrCorrupt, rec.Session, h.Seq)
		}
		if rec.ConfigSHA256 != "" && tx.Bucket(bucketConfigs).Get([]byte(rec.ConfigSHA256)) == nil {
			return fmt.Errorf("%w: %s (store it with PutConfig first)", ErrNoConfig, rec.ConfigSHA256)
		}
		rec.Seq, rec.PrevHash = h.Seq+1, h.Hash
		if rec.Seq == 1 {
			// Open until SessionsEnded: one still open when the writer
			// starts again was open when its daemon died.
			if err := tx.Bucket(bucketOpen).Put([]byte(rec.Session), []byte(rec.Time.Format(time.RFC3339Nano))); err != nil {
				return err
			}
		}
		key := seqKey(rec.Seq)
		if sessions.Get(key) != nil {
			return fmt.Errorf("%w: session %q already has a record %d", ErrCorrupt, rec.Session, rec.Seq)
		}
		if lw, err = s.beginLog(tx); err != nil {
			return err
		}
		rec.LogN = lw.next.head.N
		obj["seq"] = json.Number(strconv.FormatUint(rec.Seq, 10))
		obj["prev_hash"] = rec.PrevHash
		obj["log_n"] = json.Number(strconv.FormatUint(rec.LogN, 10))
		body, err := appendCanonical(nil, obj)
		if err != nil {
			return err
		}
		rec.Hash = sha256Hex(body)
		obj["hash"] = rec.Hash
		stored, err := appendCanonical(nil, obj)
		if err != nil {
			return err
		}
		if err := sessions.Put(key, stored); err != nil {
			return err
		}
		next := signHead(rec.Session, head{Hash: rec.Hash, Seq: rec.Seq}, s.opts.SigningKey, s.keyID)
		if err := heads.Put([]byte(rec.Session), next.encode()); err != nil {
			return err
		}
		lw.appended(rec.Session, old, rec.Seq, rec.Hash)
		if err := lw.write(tx, s.opts.SigningKey, s.keyID); err != nil {
			return err
		}
		if err := putRecording(tx, rec.Recording); err != nil {
			return err
		}
		if rec.ScreenshotSHA256 != "" {
			shots := tx.Bucket(bucketScreenshots)
			if shots.Get([]byte(rec.ScreenshotSHA256)) == nil {
				return shots.Put([]byte(rec.ScreenshotSHA256), screenshot)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("append evidence: %w", err)
	}
	s.log = lw.next
	*e = rec
	return nil
}

// truncateOutput keeps at most limit bytes of out, cut on a UTF-8 boundary,
// followed by a marker that says how much there was.
func truncateOutput(out string, limit int) (string, bool) {
	if len(out) <= limit {
		return out, false
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(out[cut]) {
		cut--
	}
	return fmt.Sprintf("%s\n[output truncated: %d of %d bytes kept; output_sha256 is of the whole output]",
		out[:cut], cut, len(out)), true
}

// Sessions lists every session with records, ordered by the time of its
// first record (then by id). It reads only the first and last record of
// each chain; a record it cannot read leaves its time zero (Verify says why).
func (s *Store) Sessions() ([]SessionSummary, error) {
	var out []SessionSummary
	err := s.db.View(func(tx *bolt.Tx) error {
		out = sessionsTx(tx)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list evidence sessions: %w", err)
	}
	return out, nil
}

// sessionsTx is Sessions inside a transaction of the caller's.
func sessionsTx(tx *bolt.Tx) []SessionSummary {
	var out []SessionSummary
	heads, all := tx.Bucket(bucketHeads), tx.Bucket(bucketSessions)
	_ = all.ForEachBucket(func(id []byte) error {
		b := all.Bucket(id)
		sum := SessionSummary{ID: string(id)}
		var last []byte // valid until the transaction ends
		_ = b.ForEach(func(_, v []byte) error {
			if v == nil {
				return nil
			}
			if sum.Records == 0 {
				sum.First = recordTime(v)
			}
			sum.Records++
			last = v
			return nil
		})
		if sum.Records == 0 {
			return nil
		}
		sum.Last = recordTime(last)
		var h head
		if raw := heads.Get(id); raw != nil && json.Unmarshal(raw, &h) == nil {
			sum.Head, sum.HeadSeq = h.Hash, h.Seq
			if h.Sig != "" {
				sum.KeyID = h.Key
			}
		}
		out = append(out, sum)
		return nil
	})
	slices.SortStableFunc(out, func(a, b SessionSummary) int {
		if c := a.First.Compare(b.First); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

func recordTime(raw []byte) time.Time {
	var r struct {
		Time time.Time `json:"time"`
	}
	_ = json.Unmarshal(raw, &r)
	return r.Time
}

// Records returns the envelopes of one session in sequence order. Numbers
// inside Args, Before and After come back as json.Number, so that no digit
// recorded is lost.
func (s *Store) Records(session string) ([]*Envelope, error) {
	var out []*Envelope
	err := s.forEachRecord(session, func(k, v []byte) error {
		e, err := decodeEnvelope(v)
		if err != nil {
			return fmt.Errorf("%w: session %q key %x: %w", ErrCorrupt, session, k, err)
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read evidence: %w", err)
	}
	return out, nil
}

// Export writes the stored records of session (of every session, in id
// order, when session is "") as JSON Lines: each line is the record's bytes
// exactly as stored, so an external tool can verify the hashes from the
// export alone.
func (s *Store) Export(w io.Writer, session string) error {
	write := func(_, v []byte) error {
		if _, err := w.Write(v); err != nil {
			return err
		}
		_, err := w.Write([]byte{'\n'})
		return err
	}
	var err error
	if session != "" {
		err = s.forEachRecord(session, write)
	} else {
		err = s.db.View(func(tx *bolt.Tx) error {
			all := tx.Bucket(bucketSessions)
			return all.ForEachBucket(func(id []byte) error {
				return all.Bucket(id).ForEach(func(k, v []byte) error {
					if v == nil {
						return nil
					}
					return write(k, v)
				})
			})
		})
	}
	if err != nil {
		return fmt.Errorf("export evidence: %w", err)
	}
	return nil
}

// forEachRecord calls fn for each record of session, in key order, inside
// one read transaction (fn must not keep k or v).
func (s *Store) forEachRecord(session string, fn func(k, v []byte) error) error {
	return s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSessions).Bucket([]byte(session))
		if b == nil {
			return fmt.Errorf("%w: %q", ErrUnknownSession, session)
		}
		return b.ForEach(func(k, v []byte) error {
			if v == nil {
				return nil
			}
			return fn(k, v)
		})
	})
}

func decodeEnvelope(raw []byte) (*Envelope, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var e Envelope
	if err := d.Decode(&e); err != nil {
		return nil, err
	}
	return &e, nil
}

// isSHA256Hex reports whether s is a lowercase hex SHA-256 digest, the
// form of every content-addressed key in the store.
func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Screenshot returns the image stored under its lowercase hex SHA-256.
func (s *Store) Screenshot(sha256hex string) ([]byte, error) {
	return s.blob(bucketScreenshots, sha256hex, ErrNoScreenshot, "screenshot")
}

// blob reads the blob stored in bucket under its lowercase hex SHA-256;
// notFound (wrapped) when there is none, or no such bucket.
func (s *Store) blob(bucket []byte, sha256hex string, notFound error, what string) ([]byte, error) {
	if !isSHA256Hex(sha256hex) {
		return nil, fmt.Errorf("%w: %q is not a SHA-256 hex digest", notFound, sha256hex)
	}
	var out []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		var v []byte
		if b := tx.Bucket(bucket); b != nil {
			v = b.Get([]byte(sha256hex))
		}
		if v == nil {
			return fmt.Errorf("%w: %s", notFound, sha256hex)
		}
		out = append([]byte(nil), v...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	return out, nil
}

// openCurrent opens the bbolt file at path and, once it holds the lock,
// checks that the file it opened is still the one at path: Compact puts a
// new file in the old one's place while holding the old one's lock, and a
// process that opened the old file meanwhile would otherwise write to a
// file nobody will read again.
func openCurrent(path string, bo *bolt.Options) (*bolt.DB, error) {
	for try := 0; ; try++ {
		var f *os.File
		o := *bo
		o.OpenFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
			var err error
			f, err = os.OpenFile(name, flag, perm)
			return f, err
		}
		db, err := bolt.Open(path, 0o600, &o)
		if err != nil {
			return nil, err
		}
		held, herr := f.Stat()
		now, nerr := os.Stat(path)
		if herr == nil && nerr == nil && os.SameFile(held, now) || try == 5 {
			return db, nil
		}
		db.Close()
	}
}
