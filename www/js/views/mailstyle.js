// views/mailstyle.js: a mail's own CSS, kept safely. The mail's frame
// inherits the app's CSP (style-src 'self'), which would drop its <style>
// and style="" as markup; so the sanitiser takes them out of the markup,
// this module cleans them (no @import, url() only to cid: images, data:
// images and, once asked for, the image proxy), and the app applies them
// through the CSSOM, which that policy does not govern. Every fetch the
// CSS could still cause stays under the frame's img-src 'self' data: blob:.

const MAX_CSS = 256 * 1024;

// url(...) in css rewritten by rewrite(url) → the new URL or null (dropped).
function urls(css, rewrite) {
  return css.replace(/url\(\s*(?:"([^"]*)"|'([^']*)'|([^)'"]*))\s*\)/gi, (m, a, b, c) => {
    const u = (a ?? b ?? c ?? "").trim();
    const to = rewrite(u);
    return to ? `url("${to.replace(/["\\\n]/g, encodeURIComponent)}")` : "none";
  });
}

// Clean CSS text: comments, @import, @font-face (fonts are not images and
// would fetch), legacy script hooks out; urls rewritten. "" when nothing is
// left or it is too large.
export function cleanCss(css, rewrite) {
  if (!css || css.length > MAX_CSS) return "";
  // Backslashes out first: an escape such as \75rl( reads as url( and
  // would slip past every pattern below; a rare legitimate escape is the
  // price.
  let s = css.replace(/\/\*[\s\S]*?\*\//g, "").replace(/<!--|-->/g, "").replace(/\\/g, "");
  s = s.replace(/@import[^;]*;?/gi, "").replace(/@font-face\s*\{[^}]*\}/gi, "");
  // image-set() takes bare strings as URLs, which the url() rewrite would
  // miss; the old script hooks are gone from browsers but cost nothing.
  s = s.replace(/(?:-webkit-)?image-set\s*\(|expression\s*\(|-moz-binding|behavior\s*:/gi, "x-");
  return urls(s, rewrite).trim();
}

// Applies the cleaned sheet and style attributes (kept as data-pstyle) to
// the frame's document.
export function apply(doc, css) {
  const win = doc.defaultView;
  if (css) {
    try {
      const sheet = new win.CSSStyleSheet();
      sheet.replaceSync(css);
      doc.adoptedStyleSheets = [sheet];
    } catch { /* a sheet the browser cannot parse is left out */ }
  }
  for (const el of doc.querySelectorAll("[data-pstyle]")) {
    el.style.cssText = el.getAttribute("data-pstyle");
    el.removeAttribute("data-pstyle");
  }
}
