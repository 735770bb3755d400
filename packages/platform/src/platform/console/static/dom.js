// Building the console's elements: everything from the API is appended as text, never parsed as markup.

/** `h("td", {class: "x"}, "text", child)`: an element, its attributes, its children (strings become text). */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (value !== false && value !== undefined) element.setAttribute(name, value === true ? "" : value);
  }
  element.append(...children.flat().filter((child) => child !== undefined && child !== null));
  return element;
}
