/**
 * A strict well-formedness check for the XML subset the JUnit report uses (no DTD, no CDATA,
 * no comments): one root, balanced tags, quoted attributes, only the predefined entities.
 * Returns the element names in document order.
 */
const NAME = "[A-Za-z_][\\w.-]*";
const ATTRIBUTE = `\\s+${NAME}="[^"<]*"`;
const TAG = new RegExp(`^<(/?)(${NAME})((?:${ATTRIBUTE})*)\\s*(/?)>`);
const ENTITY = /^&(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);/;

export function parseXmlElements(xml: string): string[] {
  let rest = xml.replace(/^<\?xml[^?]*\?>\s*/, "");
  const open: string[] = [];
  const elements: string[] = [];
  let roots = 0;
  while (rest.length > 0) {
    if (rest.startsWith("<")) {
      const tag = TAG.exec(rest);
      if (!tag) throw new Error(`Malformed tag at: ${rest.slice(0, 60)}`);
      const [whole, closing, name = "", attributes = "", selfClosing] = tag;
      checkEntities(attributes);
      if (closing) {
        if (open.pop() !== name) throw new Error(`Unbalanced </${name}>`);
      } else {
        if (open.length === 0 && ++roots > 1) throw new Error("More than one root element");
        elements.push(name);
        if (!selfClosing) open.push(name);
      }
      rest = rest.slice(whole.length);
    } else {
      const end = rest.indexOf("<");
      const text = end < 0 ? rest : rest.slice(0, end);
      if (open.length === 0 && text.trim() !== "") throw new Error(`Text outside the root: ${text.slice(0, 60)}`);
      checkEntities(text);
      rest = end < 0 ? "" : rest.slice(end);
    }
  }
  if (open.length > 0) throw new Error(`Unclosed <${open.join("> <")}>`);
  return elements;
}

function checkEntities(text: string): void {
  for (let at = text.indexOf("&"); at >= 0; at = text.indexOf("&", at + 1)) {
    if (!ENTITY.test(text.slice(at))) throw new Error(`Bare & in: ${text.slice(at, at + 30)}`);
  }
}
