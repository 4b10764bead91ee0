// The page facts the gate reads, evaluated in browsergate's isolated world
// (a JavaScript context of our own on the page's DOM): the page's scripts
// cannot redefine the built-ins used here. url and title are read over CDP
// (Page.getNavigationHistory); this reports the rest in one round trip.
//
// is_authenticated, part 1 of the documented rule: the page shows a control
// whose text or label says log out / sign out / log off.
//
// innerText (the text as rendered) is costly on a long page: it is read
// only for a control whose raw text, value or label has "log" or "sign" in
// it at all, which takes a page of hundreds of links (the Go
// specification's 715) two thirds of the time. The rendered text is the raw text with whitespace changed and
// hidden parts left out, so only a control whose word is split by hidden
// text ("Lo<span hidden>x</span>g out") is missed, and a page decides what
// it shows anyway: it can always hide its control from this rule.
(() => {
  const d = document;
  const re = /\b(log\s?out|sign\s?out|log\s?off)\b/i;
  const maybe = /log|sign/i;
  let logout = false;
  for (const e of d.querySelectorAll('a, button, [role=button], input[type=submit], input[type=button]')) {
    const label = e.getAttribute('aria-label');
    if (!maybe.test(e.textContent) && !maybe.test(e.value || '') && !maybe.test(label || '')) continue;
    const t = (e.innerText || e.value || label || '').trim();
    if (re.test(t)) { logout = true; break; }
  }
  // The document's HTTP status, as its navigation timing entry reports it
  // (0: unknown), for a navigate's reply.
  const nav = performance.getEntriesByType('navigation')[0];
  return {url: d.location.href, title: d.title, has_forms: d.forms.length > 0,
          logout: logout, ready: d.readyState === 'complete', forms: d.forms.length,
          status: (nav && nav.responseStatus) || 0};
})()
