#!/usr/bin/env node
// Compile Solidity with the pinned solc-js package.
//
//   node tools/solc-compile.js < input.json > output.json   standard-JSON in, standard-JSON out
//   node tools/solc-compile.js --version                    print the compiler version
//   node tools/solc-compile.js --module solc-0.8.17 < in    another pinned solc-js package
//                                                           (Permit2 needs its own 0.8.17)
//
// Sources must be given inline ("content"); imports are resolved only among them.
'use strict';

const fs = require('fs');
const at = process.argv.indexOf('--module');
const solc = require(at >= 0 ? process.argv[at + 1] : 'solc');

function main() {
  if (process.argv.includes('--version')) {
    process.stdout.write(solc.version() + '\n');
    return;
  }
  const input = fs.readFileSync(0, 'utf8');
  const output = solc.compile(input, {
    import: (path) => ({ error: 'import not found among the given sources: ' + path }),
  });
  process.stdout.write(output);
}

main();
