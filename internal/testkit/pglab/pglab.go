// Package pglab starts a throwaway PostgreSQL cluster on 127.0.0.1 for a
// test: Debian's PostgreSQL (initdb and pg_ctl from
// /usr/lib/postgresql/<version>/bin), a new data directory, password
// authentication (SCRAM) for one user, stopped and removed when the test
// ends. As root it runs the server as the postgres user, as PostgreSQL
// requires. It is imported only by _test.go files.
package pglab

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// User and Password are the cluster's one role (a superuser).
const (
	User     = "browsergate"
	Password = "pglab-test-password"
)

// Options tune Start.
type Options struct {
	// Durable keeps fsync on, for measurements; tests leave it off
	// (PostgreSQL's -F): a test's cluster dies with the test.
	Durable bool
}

// Cluster is a running PostgreSQL server.
type Cluster struct {
	Port int
	// PassFile is a libpq password file for User (PGPASSFILE), owner-only.
	PassFile string
	dir, bin string
	runAs    string // "" or the user the server runs as
}

// shared is the cluster of Shared, started by the first test that asks.
var shared struct {
	sync.Mutex
	c    *Cluster
	dbs  int
	stop []func()
}

// Shared is a cluster the tests of one test binary share, each in a
// database of its own: Shared returns the cluster and a new database's
// name. The package's TestMain calls StopShared after m.Run.
func Shared(t testing.TB) (*Cluster, string) {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if shared.c == nil {
		var cleanups []func()
		shared.c = start(t, nil, func(f func()) { cleanups = append(cleanups, f) })
		shared.stop = cleanups
	}
	shared.dbs++
	name := fmt.Sprintf("test%d", shared.dbs)
	shared.c.CreateDatabase(t, name)
	return shared.c, name
}

// StopShared stops the cluster of Shared, if one was started.
func StopShared() {
	shared.Lock()
	defer shared.Unlock()
	for i := len(shared.stop) - 1; i >= 0; i-- {
		shared.stop[i]()
	}
	shared.c, shared.stop = nil, nil
}

// Start initialises and starts a cluster of the test's own, failing the
// test when PostgreSQL is not installed or does not start.
func Start(t testing.TB, o *Options) *Cluster {
	t.Helper()
	return start(t, o, t.Cleanup)
}

func start(t testing.TB, o *Options, cleanup func(func())) *Cluster {
	t.Helper()
	bin, err := binDir()
	if err != nil {
		t.Fatalf("pglab: %v (install Debian's postgresql package: bash .ci/install-deps lab)", err)
	}
	c := &Cluster{bin: bin}
	if os.Geteuid() == 0 {
		c.runAs = "postgres"
	}
	dir, err := os.MkdirTemp("", "pglab-")
	if err != nil {
		t.Fatal(err)
	}
	c.dir = dir
	cleanup(func() { c.stop(); os.RemoveAll(dir) })
	if c.runAs != "" {
		u, err := user.Lookup(c.runAs)
		if err != nil {
			t.Fatalf("pglab: running as root needs the %s user of Debian's postgresql package: %v", c.runAs, err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte(Password+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.run(t, "initdb", "-D", c.data(), "-U", User, "--pwfile", pw, "-A", "scram-sha-256", "-E", "UTF8", "--no-sync", "--locale", "C")
	os.Remove(pw)
	c.PassFile = filepath.Join(dir, "pgpass")
	if err := os.WriteFile(c.PassFile, []byte(fmt.Sprintf("127.0.0.1:*:*:%s:%s\n", User, Password)), 0o600); err != nil {
		t.Fatal(err)
	}
	for attempt := 0; ; attempt++ {
		c.Port = freePort(t)
		out, err := c.start(o.durable())
		if err == nil {
			return c
		}
		if attempt == 2 {
			log, _ := os.ReadFile(filepath.Join(dir, "log"))
			t.Fatalf("pglab: pg_ctl start: %v\n%s\n%s", err, out, log)
		}
	}
}

func (o *Options) durable() bool { return o != nil && o.Durable }

// URL is the connection URL of database db (without the password: a
// client finds it in PassFile).
func (c *Cluster) URL(db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", User, c.Port, url.PathEscape(db))
}

// URLWithPassword is URL with the password in it, for in-process clients.
func (c *Cluster) URLWithPassword(db string) string {
	return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", User, Password, c.Port, url.PathEscape(db))
}

// CreateDatabase creates database name.
func (c *Cluster) CreateDatabase(t testing.TB, name string) {
	t.Helper()
	c.SQL(t, "postgres", "CREATE DATABASE "+name)
}

// SQL runs statements with psql in database db and returns what it
// printed (unaligned, tuples only), failing the test on an error.
func (c *Cluster) SQL(t testing.TB, db, statements string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
		"-h", "127.0.0.1", "-p", strconv.Itoa(c.Port), "-U", User, "-d", db, "-c", statements)
	cmd.Env = append(os.Environ(), "PGPASSFILE="+c.PassFile)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pglab: psql %q: %v\n%s", statements, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Stop stops the server at once (as a crash would leave it), for a test
// of what clients do when their store goes away.
func (c *Cluster) Stop() { c.stop() }

// Restart starts a stopped server again on the same port.
func (c *Cluster) Restart(t testing.TB) {
	t.Helper()
	if out, err := c.start(false); err != nil {
		t.Fatalf("pglab: pg_ctl start again: %v\n%s", err, out)
	}
}

// start starts the server on c.Port (durable: fsync on).
func (c *Cluster) start(durable bool) ([]byte, error) {
	opts := fmt.Sprintf("-h 127.0.0.1 -p %d -k %s -c max_connections=200", c.Port, c.dir)
	if !durable {
		opts += " -F"
	}
	return c.cmd("pg_ctl", "-D", c.data(), "-l", filepath.Join(c.dir, "log"), "-o", opts, "-w", "-t", "60", "start").CombinedOutput()
}

func (c *Cluster) stop() {
	_ = c.cmd("pg_ctl", "-D", c.data(), "-m", "immediate", "-w", "stop").Run()
}

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

func (c *Cluster) run(t testing.TB, name string, args ...string) {
	t.Helper()
	if out, err := c.cmd(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("pglab: %s: %v\n%s", name, err, out)
	}
}

// cmd runs a PostgreSQL program, as the postgres user when we are root.
func (c *Cluster) cmd(name string, args ...string) *exec.Cmd {
	path := filepath.Join(c.bin, name)
	if c.runAs == "" {
		return exec.Command(path, args...)
	}
	return exec.Command("runuser", append([]string{"-u", c.runAs, "--", path}, args...)...)
}

// binDir finds the newest PostgreSQL's programs.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("no PostgreSQL server programs (initdb) under /usr/lib/postgresql or on PATH")
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// freePort is a TCP port on 127.0.0.1 nobody listened on a moment ago.
func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// AddReader makes a role that may only read database db's tables as they
// are now (an auditor's), with its password in PassFile, and returns its
// URL.
func (c *Cluster) AddReader(t testing.TB, db, role string) string {
	t.Helper()
	password := role + "-password"
	c.SQL(t, db, fmt.Sprintf(`CREATE ROLE %s LOGIN PASSWORD '%s'; GRANT SELECT ON ALL TABLES IN SCHEMA public TO %s`, role, password, role))
	f, err := os.OpenFile(c.PassFile, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "127.0.0.1:*:*:%s:%s\n", role, password); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", role, c.Port, url.PathEscape(db))
}
