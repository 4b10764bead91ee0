// The option of a <select> or an ARIA listbox (this) that select_option
// names: by its value (by = "value"), its visible text (by = "label"), or
// (by = "either", fill_form's value) the option whose value it is, else
// the one whose visible text it is.
// It reads the DOM through the built-in prototypes' getters in the gate's
// isolated world. An ARIA listbox's options are its descendants with
// role=option and those of the elements it controls or owns (a combobox's
// popup). It returns the reason, as a string, when there is no such option
// or it is disabled.
function(by, want) {
  const getter = (proto, prop) => Object.getOwnPropertyDescriptor(proto, prop).get;
  const attr = (n, a) => Element.prototype.getAttribute.call(n, a);
  const text = n => (getter(Node.prototype, 'textContent').call(n) || '').replace(/\s+/g, ' ').trim();
  const quote = s => JSON.stringify(s);
  let options, native = false;
  if (getter(Element.prototype, 'localName').call(this) === 'select') {
    native = true;
    if (getter(HTMLSelectElement.prototype, 'disabled').call(this)) return 'the select is disabled';
    options = Array.from(getter(HTMLSelectElement.prototype, 'options').call(this));
  } else {
    const role = attr(this, 'role');
    if (role !== 'listbox' && role !== 'combobox') {
      return 'it is not a <select> nor an element with role listbox or combobox';
    }
    const roots = [this];
    for (const a of ['aria-controls', 'aria-owns']) {
      for (const id of (attr(this, a) || '').split(/\s+/)) {
        const n = id && Document.prototype.getElementById.call(document, id);
        if (n) roots.push(n);
      }
    }
    options = roots.flatMap(r => Array.from(Element.prototype.querySelectorAll.call(r, '[role=option]')));
  }
  const valueOf = o => native ? getter(HTMLOptionElement.prototype, 'value').call(o) : (attr(o, 'data-value') ?? attr(o, 'value') ?? '');
  const labelOf = o => native ? getter(HTMLOptionElement.prototype, 'label').call(o).replace(/\s+/g, ' ').trim() : (attr(o, 'aria-label') || text(o));
  const found = by === 'either' ?
    options.find(o => valueOf(o) === want) ?? options.find(o => labelOf(o) === want) :
    options.find(o => (by === 'value' ? valueOf(o) : labelOf(o)) === want);
  if (!found && by === 'either') {
    const known = options.slice(0, 20).map(o => quote(labelOf(o)) + ' (value ' + quote(valueOf(o)) + ')').join(', ');
    return `no option has the value or label ${quote(want)} (the options: ${known || 'none'})`;
  }
  if (!found) {
    const known = options.slice(0, 20).map(o => quote(by === 'value' ? valueOf(o) : labelOf(o))).join(', ');
    return `no option has the ${by} ${quote(want)} (the options' ${by}s: ${known || 'none'})`;
  }
  const disabled = native ? getter(HTMLOptionElement.prototype, 'disabled').call(found) : attr(found, 'aria-disabled') === 'true';
  if (disabled) return `the option ${quote(labelOf(found))} is disabled`;
  return found;
}
