// Makes the option (an <option> of the select this) the select's choice,
// as a user's choice would: the only selected option, then the input and
// change events the page listens for. Returns the option's label and
// value, or {refused: why} when the select's focus handlers (which ran
// before this, as a user's click focuses the select first) disabled the
// select or the option, or took the option out of it.
function(option) {
  const getter = (proto, prop) => Object.getOwnPropertyDescriptor(proto, prop).get;
  const setter = (proto, prop) => Object.getOwnPropertyDescriptor(proto, prop).set;
  const options = Array.from(getter(HTMLSelectElement.prototype, 'options').call(this));
  if (getter(HTMLSelectElement.prototype, 'disabled').call(this)) return {refused: 'the select is disabled'};
  if (!options.includes(option)) return {refused: 'the option is no longer in the select'};
  if (getter(HTMLOptionElement.prototype, 'disabled').call(option)) return {refused: 'the option is disabled'};
  for (const o of options) {
    setter(HTMLOptionElement.prototype, 'selected').call(o, o === option);
  }
  for (const type of ['input', 'change']) {
    EventTarget.prototype.dispatchEvent.call(this, new Event(type, {bubbles: true}));
  }
  return {label: getter(HTMLOptionElement.prototype, 'label').call(option), value: getter(HTMLOptionElement.prototype, 'value').call(option)};
}
