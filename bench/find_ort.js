// Loads onnxruntime-node from where scripts/install_deps.sh puts it (${NINEGRID_CACHE:-<repo>/.cache}/npm/ort),
// or exits with a message saying how to get it. Shared by the ORT scripts in bench/.
'use strict';
const fs = require('fs');
const path = require('path');

function findOrt() {
  const cache = process.env.NINEGRID_CACHE || path.join(__dirname, '..', '.cache');
  const p = path.join(cache, 'npm', 'ort', 'node_modules', 'onnxruntime-node');
  if (!fs.existsSync(p)) {
    console.error(`onnxruntime-node not found at ${p}: run scripts/setup.sh`);
    process.exit(2);
  }
  return require(p);
}

module.exports = {findOrt};
