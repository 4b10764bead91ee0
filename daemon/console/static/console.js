// The console's index follows the daemon's event stream: when an event
// says something changed, the page asks the daemon for itself again and
// takes in what changed, without a reload. Nothing the operator may be
// about to click moves: a new held call is not put into the page until
// the operator asks for it (the line under "Held calls", kept on the
// page, offers it), since it would push down everything below; a held
// call or a session keeps its place (new sessions come last), and one
// that is no longer in the list stays where it was, marked, its buttons
// disabled and its note written in a line kept for it; only the answered
// calls, below every button, are replaced whole. For half a second after
// anything on the page changed, a click on Approve, Deny or End session
// is ignored: it may have been aimed at what was there before. End
// session asks again on a page of its own. The markup taken in is the
// daemon's own rendering of this page (its templates escape whatever
// agents and pages wrote); nothing here builds HTML from an event.
(() => {
  const live = document.getElementById('live');
  if (!live) return;
  const base = location.pathname.replace(/\/+$/, '');
  const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + base + '/events';
  const watched = new Set(['approval_asked', 'approval_answered', 'session_opened', 'session_ended', 'decision']);
  const say = (state, text) => { live.dataset.state = state; live.textContent = text; };

  // changed is when the page last changed; clicks on the buttons that
  // act are ignored for settle ms after it.
  const settle = 500;
  let changed = 0;
  const moved = () => { changed = performance.now(); };
  document.addEventListener('click', e => {
    const b = e.target.closest && e.target.closest('button.approve, button.deny, button.end');
    if (b && performance.now() - changed < settle) {
      e.preventDefault();
      e.stopPropagation();
      b.classList.add('ignored');
      setTimeout(() => b.classList.remove('ignored'), settle);
    }
  }, true);

  // waiting are the new held calls not yet put into the page; offer is
  // the line, kept on the page, that offers them.
  const waiting = new Map();
  const offer = document.getElementById('held-new');
  const showWaiting = () => {
    const held = document.getElementById('held');
    for (const el of held.querySelectorAll('.none')) el.remove();
    for (const el of waiting.values()) held.append(el);
    waiting.clear();
    offer.replaceChildren();
    moved();
  };
  const offerWaiting = () => {
    if (!offer) { showWaiting(); return; }
    if (waiting.size === 0) { offer.replaceChildren(); return; }
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'show-held';
    b.textContent = waiting.size === 1 ? '1 new held call: show it' : waiting.size + ' new held calls: show them';
    b.addEventListener('click', showWaiting);
    offer.replaceChildren(b);
  };

  // keep takes in a list whose entries keep their place (data-key, and
  // data-version, which changes when an entry does); new entries of a
  // list that holds them back (data-hold) wait to be asked for.
  const keep = (cur, next) => {
    const have = new Map();
    const hold = cur.dataset.hold !== undefined;
    for (const el of cur.children) if (el.dataset.key) have.set(el.dataset.key, el);
    const seen = new Set();
    for (const el of [...next.children]) {
      seen.add(el.dataset.key);
      const old = have.get(el.dataset.key);
      have.delete(el.dataset.key);
      if (!old && hold) {
        if (!el.classList.contains('none') && !waiting.has(el.dataset.key)) waiting.set(el.dataset.key, document.importNode(el, true));
      } else if (!old) {
        cur.append(document.importNode(el, true));
        moved();
      } else if (old.dataset.version !== el.dataset.version && !old.classList.contains('gone')) {
        old.replaceWith(document.importNode(el, true));
        moved();
      }
    }
    if (hold) {
      for (const k of [...waiting.keys()]) if (!seen.has(k)) waiting.delete(k); // gone before it was shown
      offerWaiting();
    }
    for (const old of have.values()) {
      if (old.classList.contains('none')) { if (!hold) old.remove(); continue; }
      if (old.classList.contains('gone')) continue;
      old.classList.add('gone');
      for (const c of old.querySelectorAll('button, input')) c.disabled = true;
      const note = old.querySelector('.gone-note');
      if (note) note.textContent = 'No longer waiting (answered, withdrawn or past its deadline): see Answered below.';
      moved();
    }
  };
  const replace = (cur, next) => {
    cur.replaceChildren(...[...next.childNodes].map(n => document.importNode(n, true)));
    moved();
  };

  // refresh asks for the page once the daemon's view has taken event seen,
  // one request at a time (events that come meanwhile make one more).
  let seen = 0, busy = false, again = false;
  const refresh = async () => {
    if (busy) { again = true; return; }
    busy = true;
    try {
      do {
        again = false;
        const res = await fetch(base + '/?seen=' + seen, { credentials: 'same-origin', cache: 'no-store' });
        if (!res.ok || res.redirected) {
          say('ended', 'The sign-in has ended: reload the page to sign in again.');
          return;
        }
        const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
        for (const cur of document.querySelectorAll('[data-live]')) {
          const next = doc.getElementById(cur.id);
          if (!next) continue;
          if (cur.dataset.live === 'keep') keep(cur, next);
          else if (cur.innerHTML !== next.innerHTML) replace(cur, next);
        }
      } while (again);
    } catch (e) {
      say('retrying', 'The page could not be brought up to date: reload it.');
    } finally {
      busy = false;
    }
  };

  const connect = () => {
    const ws = new WebSocket(url);
    ws.onopen = () => {
      say('live', 'Live: held calls and sessions show here as they change.');
      refresh(); // what happened between the page's rendering and now
    };
    ws.onmessage = m => {
      let e;
      try { e = JSON.parse(m.data); } catch (err) { return; }
      if (!watched.has(e.type)) return;
      seen = Math.max(seen, e.seq || 0);
      refresh();
    };
    ws.onclose = e => {
      if (e.code === 1008) {
        say('ended', 'The sign-in has ended: reload the page to sign in again.');
        return;
      }
      say('retrying', 'Not connected to the daemon\'s events: retrying; what this page shows may be out of date.');
      setTimeout(connect, 3000);
    };
  };
  connect();
})();
