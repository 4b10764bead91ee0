package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/browsergate/browsergate/executor/mask"
	"github.com/browsergate/browsergate/executor/web"
	"github.com/browsergate/browsergate/scope"
	"github.com/browsergate/browsergate/scope/egress"
	"github.com/browsergate/browsergate/toolclad"
)

// launchFlags are the Chromium switches every launched browser gets. They
// keep a headless browser quiet on a closed network (no background
// networking, component updates or sync), and QUIC off so all HTTP goes
// over TCP where later egress controls can see it.
var launchFlags = []chromedp.ExecAllocatorOption{
	chromedp.DisableGPU,
	chromedp.Flag("disable-quic", true),
	chromedp.Flag("no-first-run", true),
	chromedp.Flag("disable-background-networking", true),
	chromedp.Flag("disable-component-update", true),
	chromedp.Flag("disable-sync", true),
	chromedp.Flag("disable-default-apps", true),
	// chromedp turns popup blocking off; a governed browser keeps it on.
	chromedp.Flag("disable-popup-blocking", false),
	// No back/forward cache: a page the gate reset must not come back,
	// scripts alive, through go_back. The others are browser services that
	// phone home on their own (seen at the egress proxy on Chromium 156):
	// a governed browser makes only the requests its pages make.
	// Chromium 156 also keeps its omnibox popups (WebUI pages, about 60 MB
	// a renderer) ready in every browser context, headless too, where no
	// omnibox is ever shown: two features turned off save that memory.
	chromedp.Flag("disable-features", quietFeatures),
	chromedp.Flag("no-pings", true),
	chromedp.Flag("disable-domain-reliability", true),
}

// quietFeatures are the features a governed browser runs without
// (launchFlags says why): launched here, or asked of a Selenium Grid.
const quietFeatures = "Translate,BlinkGenPropertyTrees,BackForwardCache," +
	"OptimizationHints,OptimizationGuideModelDownloading,OptimizationHintsFetching,OptimizationTargetPrediction," +
	"MediaRouter,DialMediaRouteProvider,NetworkTimeServiceQuerying,AutofillServerCommunication," +
	"CertificateTransparencyComponentUpdater,InterestFeedContentSuggestions," +
	"WebUIOmniboxPopup,WebUIOmniboxAimPopup"

// backendKey identifies one browser: sessions with the same key share it,
// each in its own browser context.
type backendKey struct {
	connect    string
	executable string
	endpoint   string
	headless   bool
	// manifest: one browser (and one request guard) per manifest, so that
	// every request the browser makes is judged by one scope.
	manifest *toolclad.Manifest
}

// backend is one browser, launched or attached on first use, with the
// request guard around it.
type backend struct {
	key      backendKey
	provider provider // where the browser comes from
	// sharedDeny are the networks no page of the daemon reaches (the
	// pools of every remote manifest, the gate: sharedDenied), and
	// deniedNets those no page of this backend's reaches besides (a
	// remote backend's: the daemon's own addresses). No grant of the
	// scope lifts either (setScope). Under mu.
	sharedDeny, deniedNets []scope.DeniedNetwork
	startup                time.Duration
	scope                  atomic.Pointer[scope.Scope] // the manifest's scope; at start, with the proxy and DevTools ports denied
	wsURL                  string                      // live: the browser\'s DevTools WebSocket
	resolver               egress.Resolver             // the proxies' resolver (nil: the system's)
	// dialHeader is what each DevTools connection to wsURL sends (a
	// Selenium Grid's basic authentication; nil: nothing).
	dialHeader http.Header
	// secretVars are the environment variables manifest secrets are read
	// from: never passed to a launched browser, whatever their name.
	secretVars []string
	logger     *slog.Logger
	// logMasker masks the logger's lines: the manifest's secrets, and the
	// secret answers operators gave its sessions (answered, under
	// answersMu; question.go).
	logMasker atomic.Pointer[mask.Masker]
	answersMu sync.Mutex
	answered  []*toolclad.Secret

	listeners *listeners     // the daemon's own endpoints, refused to every page
	devtools  netip.AddrPort // a launched browser's, as registered in listeners
	// liveEndpoints are the live DevTools endpoints this backend has
	// attached to, registered in listeners for good.
	liveEndpoints map[netip.AddrPort]bool
	// wsPortsCache keeps the scope's answers that WebSocket rules are
	// built from (wsScopePorts).
	wsPortsMu    sync.Mutex
	wsPortsCache map[wsScopeKey]*wsPorts
	// rulesBuilt, set by tests only, runs once a user-context session's
	// first WebSocket rules are built.
	rulesBuilt func()
	// openings holds a place for each session opening its browser
	// context, tab and guard (newSessionContext): at most openingsAtOnce.
	openings chan struct{}
	// sessionOpening, set by tests only, runs as each session begins to
	// open its browser context, once the browser runs and the session has
	// its place among the openings.
	sessionOpening func()

	// limiter spaces the browserless engine's requests to each host, for
	// every session of the manifest (hostLimiter).
	limiter     *web.HostLimiter
	limiterOnce sync.Once
	// pacing is the fleet's shared schedule (nil: none), for limiter.
	pacing web.Schedule

	// lowersSpinners says the executor's watch may lower this browser's
	// busy renderers (spinning.go): its tabs then report their processor
	// time. noLowering is set once a renderer could not be raised: none
	// is lowered any more.
	lowersSpinners bool
	noLowering     atomic.Bool

	// startFailed is when the browser last could not be started or
	// reached (UnixNano; 0: never), read without b.mu (failedRecently).
	startFailed atomic.Int64

	mu      sync.Mutex
	started bool
	stopped bool            // shut down with the executor: never starts again
	alloc   context.Context // allocator context
	root    context.Context // launch: the context that owns the browser
	cancel  []context.CancelFunc
}

// msSince and msBetween are durations in milliseconds, for debug logs.
func msSince(t time.Time) float64 { return msBetween(t, time.Now()) }

func msBetween(a, b time.Time) float64 { return float64(b.Sub(a).Microseconds()) / 1000 }

func ptrTrue() *bool { t := true; return &t }

// userContext reports whether the backend's sessions work in the user's
// own browser context (live, context = "user"): no browser context and no
// egress proxy of their own; request interception and the WebSocket rules
// are the request guard.
func (b *backend) userContext() bool {
	return b.key.connect == "live" && b.key.manifest.Browser.Context == toolclad.ContextUser
}

// metrics says whether the backend's tabs report their processor time to
// the watch on busy renderers: only a browser the daemon launched, and
// only when the watch runs.
func (b *backend) metrics() bool { return b.lowersSpinners && b.key.connect == "launch" }

// browserPID is the process id of the browser the backend launched (0:
// none runs, or the browser is the user's).
func (b *backend) browserPID() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.started || b.key.connect != "launch" || b.root == nil {
		return 0
	}
	if c := chromedp.FromContext(b.root); c != nil && c.Browser != nil {
		if p := c.Browser.Process(); p != nil {
			return p.Pid
		}
	}
	return 0
}

// warm starts the browser if it is not running yet (Executor.Prelaunch).
func (b *backend) warm() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return nil
	}
	return b.startLocked("browser started ahead of the first call")
}

// failedRecently says whether the browser could not be started or
// reached within the last d.
func (b *backend) failedRecently(d time.Duration) bool {
	t := b.startFailed.Load()
	return t != 0 && time.Since(time.Unix(0, t)) < d
}

// startLocked starts the browser unless it runs, and logs how long it
// took (at debug level, with msg); b.mu must be held.
func (b *backend) startLocked(msg string) error {
	if b.started {
		return nil
	}
	t0 := time.Now()
	if err := b.start(); err != nil {
		b.startFailed.Store(time.Now().UnixNano())
		return err
	}
	b.logger.Debug(msg, "connect", b.key.connect, "ms", msSince(t0))
	return nil
}

func (b *backend) start() error {
	devtools, err := b.provider.start(b)
	if err != nil {
		return err
	}
	if ap := devtools; ap.IsValid() {
		what := "the DevTools endpoint of the browser of " + b.key.manifest.Tool.Name
		switch {
		case b.key.connect != "live":
			b.devtools = ap // forgotten once the browser has stopped
			b.listeners.add(ap, what)
		case !b.liveEndpoints[ap]:
			// The user's browser outlives every connection to it (a
			// reload, a lost connection): its endpoint stays refused for
			// the daemon's life.
			if b.liveEndpoints == nil {
				b.liveEndpoints = map[netip.AddrPort]bool{}
			}
			b.liveEndpoints[ap] = true
			b.listeners.add(ap, what)
		}
	}
	b.started = true
	return nil
}

// startLive attaches to the user's browser at the manifest's
// live_endpoint (liveProvider).
func (b *backend) startLive() (netip.AddrPort, error) {
	var devtools netip.AddrPort
	ws, err := resolveLiveEndpoint(b.key.endpoint, b.startup)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%w: %v", ErrBrowserStart, err)
	}
	// The session contexts' proxy listens on this machine's loopback;
	// a browser elsewhere would dial its own loopback instead.
	if ap, ok := devtoolsAddr(ws); !ok || !ap.Addr().IsLoopback() {
		return netip.AddrPort{}, fmt.Errorf("%w: live endpoint %s is not on this machine's loopback: the egress proxy could not stand between it and the network", ErrBrowserStart, ws)
	}
	devtools, _ = b.devtoolsEndpoint(ws)
	if err := b.setScope(devtools); err != nil {
		return netip.AddrPort{}, fmt.Errorf("%w: %v", ErrBrowserStart, err)
	}
	b.wsURL = ws
	if b.key.manifest.Browser.Context == toolclad.ContextUser {
		// Beside the start, not in its way: one hidden blank target.
		go b.warnPreloading(ws)
	}
	alloc, cancel := remote.NewAllocator(context.Background(), ws, remote.NoModifyURL)
	b.alloc = alloc
	b.cancel = append(b.cancel, cancel)
	return devtools, nil
}

// startLaunch launches a Chromium of the backend's own (launchProvider).
func (b *backend) startLaunch() (netip.AddrPort, error) {
	var devtools netip.AddrPort
	if err := b.setScope(netip.AddrPort{}); err != nil {
		return netip.AddrPort{}, fmt.Errorf("%w: %v", ErrBrowserStart, err)
	}
	// The browser-wide proxy carries what no session's context does:
	// the browser's own background requests. Its refusals are logged,
	// not reported to a session.
	_, addr, err := b.newProxy(nil, nil)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%w: egress proxy: %v", ErrBrowserStart, err)
	}
	// A DevTools WebSocket (not chromedp's default pipe), so that each
	// session's target guard can hold a connection of its own; the
	// port is on loopback and denied to pages like the live one.
	sweepAbandonedProfiles(b.logger)
	userDir, err := os.MkdirTemp("", profilePrefix)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%w: %v", ErrBrowserStart, err)
	}
	// Held for the profile's life: a sweep by another daemon takes a
	// profile whose lock is free for one a killed daemon left.
	lock, err := lockProfile(userDir)
	if err != nil {
		// The profile is then never taken for abandoned: it stays
		// only should the daemon be killed.
		b.logger.Warn("could not lock the browser's profile; should the daemon be killed, it stays", "dir", userDir, "error", err)
	}
	b.cancel = append(b.cancel, func() {
		removeProfile(userDir)
		if lock != nil {
			lock.Close()
		}
	})
	opts := append(chromedp.DefaultExecAllocatorOptions[:], launchFlags...)
	opts = append(opts, proxyFlags(addr)...)
	opts = append(opts, chromedp.ExecPath(b.key.executable), chromedp.UserDataDir(userDir), remote.WebSocket,
		chromedp.Flag("remote-debugging-address", "127.0.0.1"), chromedp.Flag("remote-debugging-port", "0"))
	// The browser gets a minimal environment, not the daemon's: a
	// manifest secret read from an environment variable must not sit
	// in /proc/<pid>/environ of any browser process.
	env := browserEnv(os.Environ(), b.secretVars, !b.key.headless)
	// HOME inside the profile: not the daemon user's ~/.pki (client
	// certificates, trusted CAs) or other dotfiles.
	env = append(env, "HOME="+filepath.Join(userDir, "home"))
	opts = append(opts, chromedp.NoInheritEnv, chromedp.Env(env...),
		// No OS keyring: saved passwords stay in the throwaway profile.
		chromedp.Flag("password-store", "basic"))
	if b.key.headless {
		// No window of its own: each session opens its tab in its own
		// browser context, so the first tab Chromium would open is a
		// renderer nobody uses, and waiting for it (and attaching to
		// it) held every session back at launch (327 → 168 ms).
		// Chromium stays up with no window at all
		// (TestLaunchedBrowserOutlivesItsSessions).
		opts = append(opts, chromedp.Flag("no-startup-window", true))
	} else {
		opts = append(opts, chromedp.VisibleWindow)
	}
	if os.Geteuid() == 0 {
		// Chromium refuses to run its sandbox as root; outside root
		// the sandbox stays on.
		opts = append(opts, chromedp.NoSandbox)
		warnNoSandbox(b.logger)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	root, cancelRoot := chromedp.NewContext(alloc)
	b.alloc, b.root = alloc, root
	b.cancel = append(b.cancel, cancelAlloc, cancelRoot)
	// The first call binds the browser's lifetime to root, so it must
	// not carry the startup deadline itself: runBounded watches it
	// instead. It is a call to the browser, not to a tab: root
	// attaches to none.
	if err := runBounded(b.startup, func() error {
		_, err := chromedp.CallBrowser(root, browser.GetVersion, cdp.Empty{})
		return err
	}); err != nil {
		b.release()
		return netip.AddrPort{}, fmt.Errorf("%w: launch %s: %v", ErrBrowserStart, b.key.executable, err)
	}
	ws, err := resolveLiveEndpoint(filepath.Join(userDir, "DevToolsActivePort"), b.startup)
	if err == nil {
		var ok bool
		if devtools, ok = b.devtoolsEndpoint(ws); !ok {
			err = fmt.Errorf("%s is not an address and port", ws)
		} else {
			err = b.setScope(devtools)
		}
	}
	if err != nil {
		b.release()
		return netip.AddrPort{}, fmt.Errorf("%w: read the launched browser's DevTools endpoint: %v", ErrBrowserStart, err)
	}
	b.wsURL = ws
	return devtools, nil
}

// removeProfile removes a launched browser's profile directory once the
// browser has stopped and what was left of its processes too
// (stopLeftovers), and, should anything have written to it all the same,
// again a moment later while the daemon runs. The directory of the
// browser's singleton socket goes with it (see singletonDir).
func removeProfile(dir string) {
	stopLeftovers(dir)
	if d := singletonDir(dir); d != "" {
		_ = os.RemoveAll(d)
	}
	_ = os.RemoveAll(dir)
	go func() {
		for _, d := range []time.Duration{time.Second, 3 * time.Second} {
			time.Sleep(d)
			if _, err := os.Stat(dir); err != nil {
				return
			}
			_ = os.RemoveAll(dir)
		}
	}()
}

// stopLeftovers kills what is left of a stopped browser: the processes
// whose command line names its profile directory dir (Chromium passes
// --user-data-dir=dir to every process it starts; its crash handler has
// --database=dir/…). The network service, the zygote and its renderers can
// outlive the browser process when it is killed, and the network service
// writes its state (Default/Network Persistent State: the hosts it talked
// to) into the profile as it goes, after the profile was removed. A
// process forked as its parent died shows up a moment later, so they are
// looked for until three looks in a row find none (for at most
// leftoverWait). Nothing happens where there is no /proc.
func stopLeftovers(dir string) {
	deadline := time.Now().Add(leftoverWait)
	for quiet := 0; quiet < 3 && time.Now().Before(deadline); {
		pids := processesNaming(dir)
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if len(pids) > 0 {
			quiet = 0
		} else if quiet++; quiet == 3 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// leftoverWait bounds stopLeftovers.
const leftoverWait = 2 * time.Second

// processesNaming lists the processes of this user (but this one) whose
// command line names dir (namesDir): the browser runs as the daemon's user,
// and another user's process could not be stopped anyway.
func processesNaming(dir string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if info, err := e.Info(); err != nil {
			continue
		} else if st, ok := info.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && namesDir(string(cmdline), dir) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// namesDir says whether a command line, as /proc/<pid>/cmdline has it,
// names dir as a switch's value or the start of one (--user-data-dir=dir,
// --database=dir/Crash Reports). The arguments are separated by NULs as
// the kernel keeps them, or by spaces: Chromium rewrites its helper
// processes' command lines into one string. A longer name that begins
// with dir (dir-2) is another directory.
func namesDir(cmdline, dir string) bool {
	for from := 0; from < len(cmdline); {
		i := strings.Index(cmdline[from:], dir)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(dir)
		before := start > 0 && cmdline[start-1] == '='
		after := end == len(cmdline) || strings.IndexByte(" \x00/", cmdline[end]) >= 0
		if before && after {
			return true
		}
		from = start + 1
	}
	return false
}

// singletonDir is the directory of a launched browser's singleton socket,
// or "": Chromium makes it in the temporary directory it was given (the
// daemon's: org.chromium.Chromium.*, com.google.Chrome.* for Chrome),
// links to the socket from the profile (SingletonSocket), and removes it
// only when it quits by itself, so each browser stopped otherwise would
// leave one behind. Only a directory of that name right in the
// temporary directory is taken, whatever the link says.
func singletonDir(profile string) string {
	sock, err := os.Readlink(filepath.Join(profile, "SingletonSocket"))
	if err != nil || !filepath.IsAbs(sock) {
		return ""
	}
	d := filepath.Dir(filepath.Clean(sock))
	name := filepath.Base(d)
	if filepath.Dir(d) != filepath.Clean(os.TempDir()) ||
		!strings.HasPrefix(name, "org.chromium.Chromium.") && !strings.HasPrefix(name, "com.google.Chrome.") {
		return ""
	}
	if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
		return ""
	}
	return d
}

// check judges one URL against the backend's current scope, and refuses
// the daemon's own endpoints.
func (b *backend) check(url string) scope.Verdict {
	v := b.scope.Load().Check(url)
	if v.Allowed && v.Port != 0 {
		if deny, ok := b.listeners.hostVerdict(v.Host, v.Port); ok {
			return deny
		}
	}
	return v
}

// runBounded waits for a chromedp call that must not carry a deadline (it
// starts a browser or a target) and gives up after d.
// The caller cancels ctx on error, which ends the call if it is still
// running.
func runBounded(d time.Duration, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		return fmt.Errorf("no answer within %s (startup_timeout_seconds)", d)
	}
}

// shutdown stops the browser (launch) or drops the connections (live)
// for good.
func (b *backend) shutdown() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopped = true
	b.release()
}

// release cancels the backend's contexts; b.mu must be held.
func (b *backend) release() {
	for i := len(b.cancel) - 1; i >= 0; i-- {
		b.cancel[i]()
	}
	b.cancel = nil
	// Only once the browser has stopped: until then its port is its.
	if b.devtools.IsValid() {
		b.listeners.remove(b.devtools)
		b.devtools = netip.AddrPort{}
	}
	b.started = false
	b.root, b.alloc = nil, nil
}

// resolveLiveEndpoint turns a live_endpoint into a browser WebSocket URL.
// It accepts ws:// and wss:// URLs as they are, http:// endpoints through
// /json/version, and a path to Chrome's DevToolsActivePort file (Chrome 136+
// may expose only that for the default profile).
func resolveLiveEndpoint(endpoint string, timeout time.Duration) (string, error) {
	switch {
	case strings.HasPrefix(endpoint, "ws://"), strings.HasPrefix(endpoint, "wss://"):
		return endpoint, nil
	case strings.HasPrefix(endpoint, "http://"), strings.HasPrefix(endpoint, "https://"):
		u, err := url.Parse(endpoint)
		if err != nil {
			return "", fmt.Errorf("%w %q: %v", ErrLiveEndpoint, endpoint, err)
		}
		u.Path = "/json/version"
		client := &http.Client{Timeout: timeout}
		resp, err := client.Get(u.String())
		if err != nil {
			return "", fmt.Errorf("%w %q: %v", ErrLiveEndpoint, endpoint, err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if err != nil {
			return "", fmt.Errorf("%w %q: read /json/version: %v", ErrLiveEndpoint, endpoint, err)
		}
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("%w %q: /json/version answered %s", ErrLiveEndpoint, endpoint, resp.Status)
		}
		var v struct {
			WebSocketDebuggerURL string `json:"webSocketDebuggerUrl"`
		}
		if err := json.Unmarshal(body, &v); err != nil || v.WebSocketDebuggerURL == "" {
			return "", fmt.Errorf("%w %q: /json/version has no webSocketDebuggerUrl", ErrLiveEndpoint, endpoint)
		}
		return v.WebSocketDebuggerURL, nil
	default:
		data, err := os.ReadFile(endpoint)
		if err != nil {
			return "", fmt.Errorf("%w: %q is neither a ws:// or http:// URL nor a readable DevToolsActivePort file: %v", ErrLiveEndpoint, endpoint, err)
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if len(lines) < 2 {
			return "", fmt.Errorf("%w: %s: want two lines (port, path)", ErrLiveEndpoint, endpoint)
		}
		port, path := strings.TrimSpace(lines[0]), strings.TrimSpace(lines[1])
		if port == "" || !strings.HasPrefix(path, "/devtools/browser/") {
			return "", fmt.Errorf("%w: %s: unexpected content", ErrLiveEndpoint, endpoint)
		}
		return "ws://127.0.0.1:" + port + path, nil
	}
}

// browserEnvVars are the variables a launched Chromium may need: how to
// find programs (the Debian launcher is a shell script), where temporary
// files go, the locale, time zone and fonts. Its HOME is a directory in
// its own profile. Nothing else of the daemon's environment reaches it.
var browserEnvVars = []string{"PATH", "TMPDIR", "LANG", "LC_ALL", "TZ", "FONTCONFIG_PATH", "FONTCONFIG_FILE"}

// displayEnvVars are added for a visible window: the display to draw on.
var displayEnvVars = []string{"DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS"}

// browserEnv picks the variables a browser needs out of environ
// (NAME=value entries), leaving out any variable a manifest secret is read
// from.
func browserEnv(environ, secretVars []string, visible bool) []string {
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		wanted := slices.Contains(browserEnvVars, name) || visible && slices.Contains(displayEnvVars, name)
		if wanted && !slices.Contains(secretVars, name) {
			out = append(out, kv)
		}
	}
	return out
}
