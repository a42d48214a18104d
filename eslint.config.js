// The app's linter (eslint, pinned in package.json; make check runs it
// through tests/js/lint.test.js): its recommended rules over the app and
// the app's tests. The vendored libraries are their authors'.
import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["www/vendor/**"] },
  js.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: { ...globals.es2021 } },
    rules: {
      // Removing control characters is what several modules are for
      // (names, filenames, addresses): their patterns name them.
      "no-control-regex": "off",
    },
  },
  { files: ["www/**/*.js"], languageOptions: { globals: { ...globals.browser } } },
  // The PDF frame loads pdf.js as a classic script before its own.
  { files: ["www/pdfview.js"], languageOptions: { globals: { pdfjsLib: "readonly" } } },
  // The browser tests run in node and hand functions to the page.
  { files: ["tests/browser/**/*.mjs"], languageOptions: { globals: { ...globals.node, ...globals.browser } } },
  { files: ["tests/js/**/*.js", "eslint.config.js"], languageOptions: { globals: { ...globals.node } } },
];
