// rmw.js ROOT N_RMW N_DEL N_NEW: the same edits as rmw.py, in node (see there).
'use strict';
const fs = require('fs');
const path = require('path');

function files(root) {
  const out = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(p);
    }
  };
  walk(root);
  // Byte order, as python's sorted() of str paths (code points) gives for ASCII names.
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

const [root, nRmw, nDel, nNew] = [process.argv[2], ...process.argv.slice(3, 6).map(Number)];
const paths = files(root);
if (paths.length < nRmw + nDel) {
  console.error(`rmw.js: ${paths.length} files, need ${nRmw + nDel}`);
  process.exit(1);
}
paths.slice(0, nRmw).forEach((p, i) => {
  const data = Buffer.concat([fs.readFileSync(p), Buffer.from(`\n# edited ${i}\n`)]);
  if (i % 5 === 0) {
    fs.writeFileSync(p + '.tmp', data);
    fs.renameSync(p + '.tmp', p);
  } else {
    fs.writeFileSync(p, data);
  }
});
for (const p of paths.slice(nRmw, nRmw + nDel)) fs.unlinkSync(p);
for (let i = 0; i < nNew; i++) {
  fs.writeFileSync(path.join(root, `new_${String(i).padStart(3, '0')}.txt`), `new file ${i}\n`);
}
