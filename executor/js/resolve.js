// resolve(el, mode) works out, as the browser would, what acting on el
// does. It runs in the gate's isolated world and reads the DOM through the
// built-in prototypes' getters, so that a form control named "action",
// "type" or "form" cannot shadow what it reads.
//
// mode "click": a click on el activates the nearest element of its event
// path (el, its ancestors, across shadow roots and slots) that has an
// activation behaviour — a link, a button, an input, a label (whose
// labelled control is then activated) or a summary. A submit button (or
// image input) submits its form owner, which may be a form elsewhere in the
// document (the form attribute). Every link on the path is reported too:
// whichever of them the browser follows, each was judged.
// mode "submit": the element's form (the element itself, its form owner,
// or the form around it), submitted with the element as the submitter
// when it is a submit button.
//
// It returns {url, urls, submits, inForm, form, submitter}: url is where
// the action leads ('' for nowhere), urls every destination it may lead
// to, submits whether it submits a form.
(el, mode) => {
  const getter = (proto, prop) => Object.getOwnPropertyDescriptor(proto, prop).get;
  const tag = n => n.nodeType === 1 ? n.localName : '';
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
  const href = n => getter(tag(n) === 'area' ? HTMLAreaElement.prototype : HTMLAnchorElement.prototype, 'href').call(n);
  const out = {url: '', urls: [], submits: false, inForm: false, form: null, submitter: null};

  if (mode === 'submit') {
    let form = null;
    if (tag(el) === 'form') form = el;
    else if (['button', 'input', 'select', 'textarea', 'output', 'object', 'fieldset'].includes(tag(el))) form = el.form;
    if (!form) form = Element.prototype.closest.call(el, 'form');
    if (!form) return out;
    out.form = form;
    out.inForm = out.submits = true;
    out.submitter = isSubmitter(el) ? el : null;
    out.url = action(form, out.submitter);
    out.urls.push(out.url);
    return out;
  }

  let activated = null;
  for (let n = el; n; n = up(n)) {
    const t = tag(n);
    if (!activated && (((t === 'a' || t === 'area') && hasAttr(n, 'href')) ||
        t === 'button' || t === 'input' || t === 'label' || t === 'summary')) {
      activated = n;
    }
    if ((t === 'a' || t === 'area') && hasAttr(n, 'href')) out.urls.push(href(n));
  }
  if (activated && tag(activated) === 'label') {
    activated = getter(HTMLLabelElement.prototype, 'control').call(activated);
  }
  if (activated && (tag(activated) === 'button' || tag(activated) === 'input') && isSubmitter(activated)) {
    const form = formOf(activated);
    if (form) {
      out.form = form;
      out.submitter = activated;
      out.submits = out.inForm = true;
      out.url = action(form, activated);
      out.urls.unshift(out.url);
      return out;
    }
  }
  if (activated && (tag(activated) === 'a' || tag(activated) === 'area')) out.url = href(activated);
  else if (out.urls.length) out.url = out.urls[0];
  return out;
}
