// icons.js: postern's own icons (drawn for postern, 24×24, stroked with
// currentColor; nothing remote, no font). icon(name) is an <svg> that
// screen readers skip: the button's text names it.
const NS = "http://www.w3.org/2000/svg";
const PATHS = {
  reply: "M10 8 4 13l6 5M4 13h10a6 6 0 0 1 6 6",
  replyAll: "M12 8 6 13l6 5M8 8l-5 5 5 5M6 13h8a6 6 0 0 1 6 6",
  forward: "M14 8l6 5-6 5M20 13H10a6 6 0 0 0-6 6",
  archive: "M3 5h18v4H3zM5 9v10h14V9M10 13h4",
  trash: "M4 7h16M9 7V4h6v3M6 7l1 13h10l1-13M10 11v6M14 11v6",
  junk: "M12 3 3 20h18zM12 10v4M12 17v.5",
  read: "M3 10l9-6 9 6v10H3zM3 10l9 6 9-6",
  unread: "M3 6h18v13H3zM3 6l9 7 9-7",
  flag: "M5 21V4M5 4h12l-2 4 2 4H5",
  threads: "M4 6h16M4 12h16M4 18h10",
  more: "M5 12h.01M12 12h.01M19 12h.01",
  move: "M3 6h6l2 2h10v11H3zM8 13.5h7M12.5 10.5l3 3-3 3",
  selectAll: "M4 4h16v16H4zM8 12l3 3 5-6",
  notjunk: "M12 3 4 6v6c0 5 4 8 8 9 4-1 8-4 8-9V6zM8.5 12l2.5 2.5 4.5-5",
  print: "M7 9V3h10v6M7 17H4v-8h16v8h-3M7 14h10v7H7z",
  source: "M9 7l-5 5 5 5M15 7l5 5-5 5",
  download: "M12 4v11M7 10l5 5 5-5M5 20h14",
  back: "M15 5l-7 7 7 7",
  compose: "M4 20l1-4L16 5l3 3L8 19zM14 7l3 3",
  close: "M6 6l12 12M18 6 6 18",
  file: "M6 3h8l4 4v14H6zM14 3v4h4",
  prev: "M15 5l-7 7 7 7",
  folderNew: "M3 6h6l2 2h10v11H3zM12 11v5M9.5 13.5h5",
  rename: "M4 20h4L19 9l-4-4L4 16zM13 7l4 4",
  next: "M9 5l7 7-7 7",
  filter: "M3 5h18l-7 8v6l-4 2v-8z",
  contacts: "M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8zM4 21a8 8 0 0 1 16 0",
};

export function icon(name) {
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  svg.setAttribute("class", "icon");
  const p = document.createElementNS(NS, "path");
  p.setAttribute("d", PATHS[name] || PATHS.file);
  svg.append(p);
  return svg;
}
