package mask_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// benchPage is about 200 KB of page text as extract_html returns it:
// markup, links with queries, entities and escapes, and the value once
// raw and once percent-encoded.
func benchPage(value string) string {
	var b strings.Builder
	for i := 0; b.Len() < 200_000; i++ {
		fmt.Fprintf(&b, `<div class="item-%d"><a href="https://shop.example.com/p/%d?ref=home&amp;q=blue%%20shoes&amp;page=%d">Product %d &mdash; comfortable shoes, size 42</a>`, i, i*7, i%13, i)
		fmt.Fprintf(&b, `<p data-json="{&quot;id&quot;:%d,&quot;name&quot;:&quot;a \u003cb\u003e&quot;}">Lorem ipsum dolor sit amet, consectetur adipiscing elit; 5 &lt; 7 &amp;&amp; 9 &gt; 3. Price: 19.99 EUR.</p></div>`+"\n", i)
		if i == 400 {
			b.WriteString("<p>" + value + "</p><a href=\"/?p=" + url.QueryEscape(value) + "\">x</a>\n")
		}
	}
	return b.String()
}

// BenchmarkMasker masks a 200 KB page for one secret: the cost the masker
// adds to every extract_html of that size (and, in smaller measure, to
// every reply, record and log line).
func BenchmarkMasker(b *testing.B) {
	for _, value := range []string{`k& 9<Q!x&a 7>z`, `ghp_R2d9sK7qLmW4xZ8vN1cT6yB3hJ5pF0aE_secret`} {
		b.Run(fmt.Sprintf("len%d", len(value)), func(b *testing.B) {
			m := newMasker(b, value)
			page := benchPage(value)
			b.SetBytes(int64(len(page)))
			for b.Loop() {
				if m.Mask(page) == page {
					b.Fatal("nothing masked")
				}
			}
		})
	}
}
