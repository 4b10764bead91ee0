package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/browsergate/browsergate/evidence"
)

// The target guard's side of downloads (downloads.go): it sets the
// download behaviour, hears every download of the browser on its
// connection, and hands the session those of its frames; in a user's
// profile it also looks after the user's own downloads while sessions
// hold the setting.

// downloadEvent routes a Browser.download* event the guard's connection
// got: the session's downloads take those of its frames.
func (g *targetGuard) downloadEvent(m cdpMessage) {
	if g.downloads == nil {
		return
	}
	switch m.Method {
	case "Browser.downloadWillBegin":
		var e struct {
			FrameID           string `json:"frameId"`
			GUID              string `json:"guid"`
			URL               string `json:"url"`
			SuggestedFilename string `json:"suggestedFilename"`
		}
		if json.Unmarshal(m.Params, &e) != nil {
			return
		}
		if page, ok := g.frameURL(e.FrameID); ok {
			g.downloads.begin(g.cancelDownload, e.GUID, e.URL, e.SuggestedFilename, page, g.downloadLoaders(e.FrameID, e.URL))
		} else if g.user && g.looksAfterUser() && !g.ownedByAnother(e.FrameID) {
			g.userDownload(m)
		}
	case "Browser.downloadProgress":
		var e struct {
			GUID          string  `json:"guid"`
			TotalBytes    float64 `json:"totalBytes"`
			ReceivedBytes float64 `json:"receivedBytes"`
			State         string  `json:"state"`
		}
		if json.Unmarshal(m.Params, &e) == nil && !g.downloads.progress(e.GUID, e.State, int64(e.TotalBytes), int64(e.ReceivedBytes)) && g.user {
			g.userDownload(m)
		}
	}
}

// ownedByAnother reports whether the guard of another session on the
// same browser knows the frame: its download is that session's, not the
// user's.
func (g *targetGuard) ownedByAnother(frame string) bool {
	liveGuards.mu.Lock()
	others := slices.Clone(liveGuards.by[g.wsURL])
	liveGuards.mu.Unlock()
	for _, o := range others {
		if o != g && o.ownsFrame(frame) {
			return true
		}
	}
	return false
}

// ownsFrame reports whether a frame is one of the session's.
func (g *targetGuard) ownsFrame(id string) bool {
	_, ok := g.frameURL(id)
	return ok
}

// frameURL is the URL of a frame's document as the browser reported it
// committed ("" before it did), and whether the frame is the session's.
func (g *targetGuard) frameURL(id string) (string, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	u, ok := g.frames[id]
	return u, ok && id != ""
}

func (g *targetGuard) addFrame(id string) {
	if id == "" {
		return
	}
	g.mu.Lock()
	if _, ok := g.frames[id]; !ok {
		g.frames[id] = ""
	}
	g.mu.Unlock()
}

// frameCommitted takes a frame of the session's and the URL of the
// document it committed (Page.frameNavigated, Page.getFrameTree).
func (g *targetGuard) frameCommitted(id, url string) {
	if id == "" {
		return
	}
	g.mu.Lock()
	if old := g.runsAs(id, g.frames[id]); old != "" && old != hostOf(url) { // a blank document: as the origin it ran as
		if g.replaced == nil {
			g.replaced = map[string]replacedDoc{}
		}
		g.replaced[id] = replacedDoc{host: old, at: time.Now()}
	}
	g.frames[id] = url
	g.mu.Unlock()
}

// noteFrame takes a frame a page of the session's attached, and the
// frame that embeds it.
func (g *targetGuard) noteFrame(m cdpMessage) {
	var e struct {
		FrameID       string `json:"frameId"`
		ParentFrameID string `json:"parentFrameId"`
	}
	if json.Unmarshal(m.Params, &e) == nil {
		g.addFrame(e.FrameID)
		g.frameEmbedded(e.FrameID, e.ParentFrameID)
	}
}

// seedFrames takes the frames a page already had when the guard took it
// (a user's tab adopted): later ones it hears of as they attach.
func (g *targetGuard) seedFrames(ctx context.Context, targetID string) {
	session := g.sessionOf(targetID)
	if session == "" {
		return
	}
	raw, err := g.call(ctx, session, "Page.getFrameTree", map[string]any{})
	if err != nil {
		g.logger.Debug("target guard: the frames of an adopted tab", "target", targetID, "error", err)
		return
	}
	type frameTree struct {
		Frame struct {
			ID  string `json:"id"`
			URL string `json:"url"`
		} `json:"frame"`
		ChildFrames []json.RawMessage `json:"childFrames"`
	}
	var walk func(raw json.RawMessage, parent string)
	walk = func(raw json.RawMessage, parent string) {
		var t frameTree
		if json.Unmarshal(raw, &t) != nil {
			return
		}
		g.frameCommitted(t.Frame.ID, t.Frame.URL)
		g.frameEmbedded(t.Frame.ID, parent)
		for _, c := range t.ChildFrames {
			walk(c, t.Frame.ID)
		}
	}
	var res struct {
		FrameTree json.RawMessage `json:"frameTree"`
	}
	if json.Unmarshal(raw, &res) == nil {
		walk(res.FrameTree, "")
	}
}

// setDownloadBehavior tells the browser where the session's downloads go
// (the staging directory) and to report each one on the guard's
// connection. In a browser context of the session's own the setting is
// that context's; in the user's context it is the user's profile's while
// the session lasts (Chromium sets it back to the default when the
// connection closes). Without a downloads handler it changes nothing.
func (g *targetGuard) setDownloadBehavior(ctx context.Context) error {
	if g.downloads == nil {
		return nil
	}
	params := g.downloads.behavior()
	if !g.user {
		params["browserContextId"] = g.context
	}
	_, err := g.call(ctx, "", "Browser.setDownloadBehavior", params)
	return err
}

// cancelDownload asks the browser to cancel a download of the guard's
// browser context.
func (g *targetGuard) cancelDownload(guid string) {
	p := map[string]any{"guid": guid}
	if !g.user {
		p["browserContextId"] = g.context
	}
	if _, err := g.call(context.Background(), "", "Browser.cancelDownload", p); err != nil {
		g.logger.Debug("target guard: cancel a download", "guid", guid, "error", err)
	}
}

// liveGuards are the target guards of sessions in users' own browser
// contexts, by browser endpoint. The download behaviour they set is the
// user's profile's, and Chromium puts it back to the default when any
// connection that set it closes: the others set it again (close). The
// first guard of an endpoint also looks after the user's own downloads
// while sessions are attached (userDownload).
var liveGuards = struct {
	mu sync.Mutex
	by map[string][]*targetGuard
	// user are the user's own downloads under way, by GUID; moving counts
	// those being moved out of the staging directory.
	user    map[string]*userDownloadInfo
	moving  int
	staging string // the shared staging directory (joinLive)
}{by: map[string][]*targetGuard{}, user: map[string]*userDownloadInfo{}}

// userDownloadInfo is a download of the user's own under way: the frame
// that began it, its URL and the name the browser suggested.
type userDownloadInfo struct{ frame, url, name string }

// joinLive registers a guard of the user's context, and gives its
// downloads the staging directory the process's sessions in users'
// profiles share (made by the first to join, removed after the last has
// left: removeStagingLocked).
func (g *targetGuard) joinLive() error {
	liveGuards.mu.Lock()
	defer liveGuards.mu.Unlock()
	if liveGuards.staging == "" {
		d, err := os.MkdirTemp("", "browsergate-user-downloads-")
		if err != nil {
			return fmt.Errorf("make the downloads' staging directory: %w", err)
		}
		liveGuards.staging = d
	}
	if g.downloads != nil {
		g.downloads.staging = liveGuards.staging
	}
	liveGuards.by[g.wsURL] = append(liveGuards.by[g.wsURL], g)
	return nil
}

// leaveLive unregisters a guard of the user's context whose connection
// closed, and has the others set the download behaviour again.
func (g *targetGuard) leaveLive() {
	liveGuards.mu.Lock()
	rest := slices.DeleteFunc(liveGuards.by[g.wsURL], func(o *targetGuard) bool { return o == g })
	liveGuards.by[g.wsURL] = rest
	if len(rest) == 0 {
		delete(liveGuards.by, g.wsURL)
	}
	others := slices.Clone(rest)
	removeStagingLocked()
	liveGuards.mu.Unlock()
	for _, o := range others {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := o.setDownloadBehavior(ctx); err != nil {
				o.logger.Warn("target guard: could not set the download behaviour again after another session ended", "error", err)
			}
		}()
	}
}

// removeStagingLocked removes the user-profile staging directory when no
// session of this process is attached to a user's profile and nothing is
// being moved out of it. liveGuards.mu is held.
func removeStagingLocked() {
	if len(liveGuards.by) == 0 && liveGuards.moving == 0 && liveGuards.staging != "" {
		_ = os.RemoveAll(liveGuards.staging)
		liveGuards.staging = ""
		clear(liveGuards.user)
	}
}

// looksAfterUser reports whether the guard is the one that looks after
// the user's own downloads of its browser.
func (g *targetGuard) looksAfterUser() bool {
	liveGuards.mu.Lock()
	defer liveGuards.mu.Unlock()
	gs := liveGuards.by[g.wsURL]
	return len(gs) > 0 && gs[0] == g
}

// userDownload follows a download of the user's own (a frame of no
// session's) while sessions hold the profile's download behaviour: it is
// completed in the staging directory and then moved to the user's download
// directory ($XDG_DOWNLOAD_DIR, else ~/Downloads), under its name, never
// over a file; where there is none, it stays staged and the log says where.
func (g *targetGuard) userDownload(m cdpMessage) {
	var e struct {
		FrameID           string `json:"frameId"`
		GUID              string `json:"guid"`
		URL               string `json:"url"`
		SuggestedFilename string `json:"suggestedFilename"`
		State             string `json:"state"`
	}
	if json.Unmarshal(m.Params, &e) != nil || !validGUID(e.GUID) {
		return
	}
	if m.Method == "Browser.downloadWillBegin" {
		liveGuards.mu.Lock()
		liveGuards.user[e.GUID] = &userDownloadInfo{frame: e.FrameID, url: e.URL, name: e.SuggestedFilename}
		liveGuards.mu.Unlock()
		return
	}
	liveGuards.mu.Lock()
	dl := liveGuards.user[e.GUID]
	if dl == nil || e.State == "inProgress" {
		liveGuards.mu.Unlock()
		return
	}
	delete(liveGuards.user, e.GUID)
	if e.State != "completed" || liveGuards.staging == "" {
		liveGuards.mu.Unlock()
		return
	}
	// Counted as being moved before the lock is let go, so that the
	// staging directory outlives the check below.
	staged := filepath.Join(liveGuards.staging, e.GUID)
	liveGuards.moving++
	liveGuards.mu.Unlock()
	done := func() {
		liveGuards.mu.Lock()
		liveGuards.moving--
		removeStagingLocked()
		liveGuards.mu.Unlock()
	}
	// A session's guard may have heard of the frame only after the
	// download began (each guard hears its frames on its own connection):
	// then it is that session's download, not the user's. A session
	// that did not hear it begin cannot report it either: it is left in
	// the staging directory, which goes when the sessions do.
	if g.ownsFrame(dl.frame) || g.ownedByAnother(dl.frame) {
		g.logger.Warn("a download the user's download handling took up was a session's, whose guard heard of its frame late: it is not moved to the user's download directory",
			"url", dl.url, "file", staged)
		done()
		return
	}
	go func() {
		defer done()
		dir := os.Getenv("XDG_DOWNLOAD_DIR")
		if dir == "" {
			if home, err := os.UserHomeDir(); err == nil {
				dir = filepath.Join(home, "Downloads")
			}
		}
		f, err := os.Open(staged)
		if err == nil {
			var ref evidence.FileRef
			ref, err = saveFile(dir, dl.name, f, 1<<62)
			f.Close()
			if err == nil {
				_ = os.Remove(staged)
				g.logger.Info("a download of the user's own, made while a session held the browser's download setting, was moved to the user's download directory",
					"url", dl.url, "file", filepath.Join(dir, ref.Name))
				return
			}
		}
		g.logger.Warn("a download of the user's own, made while a session held the browser's download setting, is in browsergate's staging directory",
			"url", dl.url, "file", staged, "error", err)
	}()
}
