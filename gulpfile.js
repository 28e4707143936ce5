const { src, dest } = require('gulp');

/** Copies node and credential icons (and codex JSON) next to the compiled files in dist/. */
function buildIcons() {
	return src(['nodes/**/*.{png,svg}', 'credentials/**/*.{png,svg}', 'nodes/**/*.node.json'], {
		base: '.',
		encoding: false,
	}).pipe(dest('dist'));
}

exports['build:icons'] = buildIcons;
exports.default = buildIcons;
