// n8n loads this package through the "n8n" field of package.json (the compiled files in dist/), so
// the package has no "main" and this file is not published; it only lets the repository root be
// required during development.
module.exports = {};
