// Where acting on the element (this) would send the tab. It runs in the
// gate's isolated world and reads the DOM through the built-in prototypes,
// so that a form field named "action" or "type" cannot shadow what it reads.
// mode "click": the enclosing link's href, or, when the element is (inside)
// a submit button, the action its form would post to. mode "submit": the
// action of the element's form. An empty url: the act navigates nowhere.
function(mode) {
  const desc = (proto, prop) => Object.getOwnPropertyDescriptor(proto, prop).get;
  const closest = (el, sel) => Element.prototype.closest.call(el, sel);
  const formAction = desc(HTMLFormElement.prototype, 'action');
  if (mode === 'click') {
    const a = closest(this, 'a[href], area[href]');
    if (a) return {url: a.href, submits: false, inForm: false};
  }
  let submitter = closest(this, 'button, input[type=submit], input[type=image]');
  if (submitter) {
    const proto = submitter.tagName === 'BUTTON' ? HTMLButtonElement.prototype : HTMLInputElement.prototype;
    const type = desc(proto, 'type').call(submitter);
    if (type !== 'submit' && type !== 'image') submitter = null;
  }
  let form = null;
  if (mode === 'click') {
    if (!submitter) return {url: '', submits: false, inForm: false};
    form = desc(Object.getPrototypeOf(submitter), 'form') ? submitter.form : null;
  } else {
    form = this.tagName === 'FORM' ? this : (this.form || closest(this, 'form'));
  }
  if (!form) return {url: '', submits: false, inForm: false};
  let url = formAction.call(form);
  if (submitter && Element.prototype.hasAttribute.call(submitter, 'formaction')) {
    const proto = submitter.tagName === 'BUTTON' ? HTMLButtonElement.prototype : HTMLInputElement.prototype;
    url = desc(proto, 'formAction').call(submitter);
  }
  return {url: url, submits: true, inForm: true};
}
