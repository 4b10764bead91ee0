// Package a11y is the accessibility audit of a page: axe-core (vendored
// unmodified in axe/, MPL-2.0), the script that runs it, and the reading
// of its results into a short, bounded report of the rules a page breaks.
//
// The executor runs [Source] and then [Run] in an isolated world of its
// own on the page (a JavaScript context with built-ins the page's scripts
// cannot redefine), so that a page can neither replace axe nor the DOM
// methods it calls; what the page's DOM holds is the page's, and what the
// report quotes of it (selectors, the rules' targets) is page content.
package a11y
