// resolve(el, mode) works out what acting on el may do, for the gate to
// judge. It runs in the gate's isolated world and reads the DOM through
// the built-in prototypes' getters, so that a form control named "action",
// "type" or "form" cannot shadow what it reads. Where the browser's rules
// leave a choice, it takes the union: every form a click may submit and
// every link it may follow is reported, so the gate judges them all (a
// few harmless clicks are refused for it).
//
// mode "click": the click lands on el or on something inside it (the
// point under the mouse), and runs the default handling of each element on
// the event path from there up (across shadow roots and slots) until one
// claims it. Reported: every link on el's path and in its subtree (HTML and
// SVG links), every submit button or image input with a form owner there
// (its form may be elsewhere, by the form attribute; its formaction wins),
// the same for the control of every label there, and whether an embedded
// document (iframe, frame, object, embed) is in reach, whose content the
// gate cannot see.
// mode "submit": the element's form (the element itself, its form owner,
// or the form around it), submitted with the element as the submitter
// when it is a submit button.
// mode "enter": Enter pressed in a text field (or a checkbox, radio
// button or range): its form, submitted by its default button, when
// implicit submission would submit it.
//
// It returns {url, urls, submits, inForm, embeds, downloads, form,
// submitter}: url is where the action leads ('' for nowhere: the form's
// action when it submits, else the first link), urls every destination it
// may lead to; downloads: a link on the way has the download attribute.
(el, mode) => {
  const getter = (proto, prop) => Object.getOwnPropertyDescriptor(proto, prop).get;
  const SVG = 'http://www.w3.org/2000/svg', XLINK = 'http://www.w3.org/1999/xlink';
  const tag = n => n && n.nodeType === 1 ? getter(Element.prototype, 'localName').call(n) : '';
  const hasAttr = (n, a) => Element.prototype.hasAttribute.call(n, a);
  const up = n => {
    if (n.nodeType === 11) return getter(ShadowRoot.prototype, 'host').call(n);
    if (n.nodeType === 1) {
      const slot = getter(Element.prototype, 'assignedSlot').call(n);
      if (slot) return slot;
    }
    return getter(Node.prototype, 'parentNode').call(n);
  };
  const proto = n => tag(n) === 'button' ? HTMLButtonElement.prototype : HTMLInputElement.prototype;
  const typeOf = n => getter(proto(n), 'type').call(n);
  const isSubmitter = n => (tag(n) === 'button' && typeOf(n) === 'submit') ||
    (tag(n) === 'input' && (typeOf(n) === 'submit' || typeOf(n) === 'image'));
  const formOf = n => getter(proto(n), 'form').call(n);
  const action = (form, submitter) => submitter && hasAttr(submitter, 'formaction')
    ? getter(proto(submitter), 'formAction').call(submitter)
    : getter(HTMLFormElement.prototype, 'action').call(form);
  const isSVG = n => getter(Element.prototype, 'namespaceURI').call(n) === SVG;
  const isLink = n => {
    const t = tag(n);
    if (isSVG(n)) return t === 'a' && (hasAttr(n, 'href') || Element.prototype.hasAttributeNS.call(n, XLINK, 'href'));
    return (t === 'a' || t === 'area') && hasAttr(n, 'href');
  };
  const linkURL = n => {
    if (isSVG(n)) {
      const raw = Element.prototype.getAttribute.call(n, 'href') ?? Element.prototype.getAttributeNS.call(n, XLINK, 'href');
      try { return new URL(raw, getter(Node.prototype, 'baseURI').call(n)).href; } catch (e) { return raw; }
    }
    return getter(tag(n) === 'area' ? HTMLAreaElement.prototype : HTMLAnchorElement.prototype, 'href').call(n);
  };
  // The fields that block implicit submission, as Chromium counts them
  // (its text fields: a date or time field does not), and those in which
  // Enter submits only by the form's default button.
  const blocksImplicit = ['text', 'search', 'url', 'tel', 'email', 'password', 'number'];
  const buttonOnlyTypes = ['checkbox', 'radio', 'range', 'date', 'month', 'week', 'time', 'datetime-local'];
  const embedded = ['iframe', 'frame', 'object', 'embed', 'portal', 'fencedframe'];
  const out = {url: '', urls: [], submits: false, inForm: false, embeds: false, downloads: false, form: null, submitter: null};

  if (mode === 'submit' || mode === 'enter') {
    let form = null;
    if (tag(el) === 'form') form = el;
    else if (tag(el) === 'button' || tag(el) === 'input') form = formOf(el);
    else if (['select', 'textarea', 'output', 'object', 'fieldset'].includes(tag(el))) form = el.form;
    if (!form) form = Element.prototype.closest.call(el, 'form');
    if (!form) return out;
    out.form = form;
    out.inForm = true;
    let submitter = isSubmitter(el) ? el : null;
    if (mode === 'enter') {
      // HTML's implicit submission: Enter in a text field submits its form
      // by the form's default button (its first submit button in tree
      // order; nothing when that one is disabled), or, without one, only
      // when a single field of the form blocks implicit submission. In a
      // checkbox, a radio button, a range or a date or time field
      // (Chromium submits from those too) only the default button submits.
      // From those (and a select) Chromium clicks the first submit button
      // that is not disabled. The form's controls in tree order, image
      // buttons too (form.elements leaves them out).
      const buttonOnly = tag(el) === 'select' || (tag(el) === 'input' && buttonOnlyTypes.includes(typeOf(el)));
      const disabled = n => Element.prototype.matches.call(n, ':disabled');
      let blocking = 0;
      submitter = null;
      const doc = getter(Node.prototype, 'ownerDocument').call(form);
      for (const c of Document.prototype.querySelectorAll.call(doc, 'input, button')) {
        if (formOf(c) !== form) continue;
        if (!submitter && isSubmitter(c) && !(buttonOnly && disabled(c))) submitter = c;
        if (tag(c) === 'input' && blocksImplicit.includes(typeOf(c))) blocking++;
      }
      if (!submitter && (buttonOnly || blocking > 1)) return out;
      if (submitter && disabled(submitter)) return out;
    }
    out.submits = true;
    out.submitter = submitter;
    out.url = action(form, out.submitter);
    out.urls.push(out.url);
    return out;
  }

  const posts = [], links = [], seen = new Set();
  const note = n => {
    if (seen.has(n)) return;
    seen.add(n);
    if (isLink(n)) {
      links.push(linkURL(n));
      if (hasAttr(n, 'download')) out.downloads = true;
    }
    if ((tag(n) === 'button' || tag(n) === 'input') && isSubmitter(n)) {
      const form = formOf(n);
      if (form) posts.push({form: form, submitter: n, url: action(form, n)});
    }
    if (embedded.includes(tag(n))) out.embeds = true;
    if (tag(n) === 'label') {
      const control = getter(HTMLLabelElement.prototype, 'control').call(n);
      if (control) path(control);
    }
  };
  // The event path from n up, across shadow roots and slots.
  const path = n => { for (; n; n = up(n)) if (n.nodeType === 1) note(n); };
  // Everything inside n that a click on n may land on (open shadow trees
  // too; a closed one is checked at the click, from the node hit).
  const subtree = n => {
    const walker = document.createTreeWalker(n, NodeFilter.SHOW_ELEMENT);
    for (let d = walker.currentNode; d; d = walker.nextNode()) {
      note(d);
      const root = getter(Element.prototype, 'shadowRoot').call(d);
      if (root) for (const c of root.children) subtree(c);
    }
  };
  path(el);
  subtree(el);
  if (posts.length) {
    out.submits = out.inForm = true;
    out.form = posts[0].form;
    out.submitter = posts[0].submitter;
    out.url = posts[0].url;
  } else if (links.length) {
    out.url = links[0];
  }
  for (const u of posts.map(p => p.url).concat(links)) if (!out.urls.includes(u)) out.urls.push(u);
  return out;
}
