// n8n loads this package through the "n8n" field of package.json (dist/…); this entry point only
// exists so that `require('n8n-nodes-extraction-service')` resolves.
module.exports = {};
