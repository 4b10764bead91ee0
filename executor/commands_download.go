package executor

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	neturl "net/url"
	"path"
	"strings"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/evidence"
)

// actDownload fetches a URL inside the scope into the download directory:
// with the browser's cookies for each URL on the way, and through an
// egress proxy of the session's, which judges the URL and every redirect
// like any request of the session's pages (refusals are the call's).
func actDownload(ctx context.Context, s *session, args map[string]any, _ *facts) (output, error) {
	u, _ := args["url"].(string)
	d := s.downloads
	if d == nil || !d.declared {
		return output{}, errors.New("the manifest does not declare download")
	}
	proxy, addr, err := s.backend.newProxy(s.egress.blocked, &s.egress)
	if err != nil {
		return output{}, fmt.Errorf("egress proxy: %w", err)
	}
	defer func() {
		proxy.Close()
		s.backend.forgetProxy(addr) // once closed: until then the port is its
	}()
	var ua string
	_ = s.evalValueInWorld(ctx, "navigator.userAgent", &ua)
	client := &http.Client{
		Transport: &http.Transport{Proxy: http.ProxyURL(&neturl.URL{Scheme: "http", Host: addr}), DisableCompression: true},
		Jar:       browserJar{ctx: ctx},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return output{}, err
	}
	if ua != "" {
		req.Header.Set("User-Agent", ua)
	}
	resp, err := client.Do(req)
	if err != nil {
		return output{}, fmt.Errorf("download %s: %w", u, err)
	}
	defer resp.Body.Close()
	return saveResponse(resp, u, u, "", d.dir, d.max, browserNaming)
}

// saveResponse saves a response's body into dir (download and
// download_file): under asked, else the name the response suggests, made
// safe by naming; within max bytes, an announced larger file refused
// before a byte is read; nothing kept of a failure. The file is recorded
// with url; shown is the URL as the reply names it.
func saveResponse(resp *http.Response, url, shown, asked, dir string, max int64, naming fileNaming) (output, error) {
	if resp.StatusCode/100 != 2 {
		return output{}, fmt.Errorf("download %s: HTTP %s; nothing was saved", shown, resp.Status)
	}
	name := asked
	if name == "" {
		name = responseFileName(resp)
	}
	ref := evidence.FileRef{Direction: "download", URL: url}
	if resp.ContentLength > max {
		ref.Name, ref.Refused = naming.sanitize(name), fmt.Sprintf("larger than max_download_bytes (%d bytes): %d", max, resp.ContentLength)
		return output{Files: []evidence.FileRef{ref}}, fmt.Errorf("download %s refused: %s; nothing was saved", shown, ref.Refused)
	}
	saved, err := saveFileAs(dir, name, resp.Body, max, naming)
	saved.URL = url
	if err != nil {
		saved.Refused = err.Error()
		return output{Files: []evidence.FileRef{saved}}, fmt.Errorf("download %s: %w; nothing was saved", shown, err)
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err == nil {
		saved.ContentType = mt
	}
	return output{Files: []evidence.FileRef{saved}, Text: strings.TrimPrefix(downloadNote([]downloadNews{{file: saved}}, noteValue), "\n")}, nil
}

// responseFileName is the name a response suggests: its Content-Disposition
// filename, else the last element of its URL's path (sanitised later).
func responseFileName(resp *http.Response) string {
	if _, params, err := mime.ParseMediaType(resp.Header.Get("Content-Disposition")); err == nil && params["filename"] != "" {
		return params["filename"]
	}
	if resp.Request != nil && resp.Request.URL != nil {
		return path.Base(resp.Request.URL.Path)
	}
	return ""
}

// browserJar gives a download the browser's cookies for each URL (the
// user's session where the session works in the user's browser). What the
// response sets is not kept.
type browserJar struct{ ctx context.Context }

func (j browserJar) SetCookies(*neturl.URL, []*http.Cookie) {}

func (j browserJar) Cookies(u *neturl.URL) []*http.Cookie {
	res, err := chromedp.Call(j.ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{u.String()}})
	if err != nil {
		return nil
	}
	var out []*http.Cookie
	for _, c := range res.Cookies {
		out = append(out, &http.Cookie{Name: c.Name, Value: c.Value})
	}
	return out
}
