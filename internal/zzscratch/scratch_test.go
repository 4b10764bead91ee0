package zzscratch

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

func TestEvents(t *testing.T) {
	body, _ := os.ReadFile(os.Getenv("PAGE"))
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(body)
	}))
	u := "http://" + ln.Addr().String() + "/"
	actx, c1 := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath("/usr/bin/chromium"), chromedp.Headless, chromedp.NoSandbox, chromedp.Flag("disable-gpu", true))
	defer c1()
	ctx, c2 := chromedp.NewContext(actx)
	defer c2()
	chromedp.Do(ctx, chromedp.Navigate("about:blank"))
	chromedp.Call(ctx, network.Enable, network.EnableParams{})
	var t0 time.Time
	chromedp.Listen(ctx, func(ev any) {
		ms := float64(time.Since(t0).Microseconds()) / 1000
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			fmt.Printf("%7.1f req %s %s frame=%s\n", ms, e.Type, e.Request.URL, e.FrameID)
		case *network.EventLoadingFinished:
			fmt.Printf("%7.1f finished %s\n", ms, e.RequestID)
		case *network.EventLoadingFailed:
			fmt.Printf("%7.1f failed %s\n", ms, e.RequestID)
		case *page.EventDomContentEventFired:
			fmt.Printf("%7.1f DCL\n", ms)
		case *page.EventLoadEventFired:
			fmt.Printf("%7.1f load\n", ms)
		case *page.EventFrameStoppedLoading:
			fmt.Printf("%7.1f stopped\n", ms)
		}
	})
	for i := 0; i < 3; i++ {
		t0 = time.Now()
		chromedp.Do(ctx, chromedp.Navigate(u))
		fmt.Printf("%7.1f navigate returned\n", float64(time.Since(t0).Microseconds())/1000)
		time.Sleep(300 * time.Millisecond)
		fmt.Println("--")
	}
}
